import t from 'tap';
import { Router } from '../../src/http/router.js';

t.test('static, parameter and trailing-slash matching', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v2/hrs', 'list');
  r.add('GET', '/v2/hrs/status', 'all-status');
  r.add('GET', '/v2/hrs/:hrs_id', 'one');
  r.add('POST', '/import/v2/signal/usage/', 'usage');
  t.match(r.match('GET', '/v2/hrs'), { kind: 'found', route: 'list' });
  t.match(r.match('GET', '/v2/hrs/status'), { kind: 'found', route: 'all-status' });
  t.match(r.match('GET', '/v2/hrs/BERLA'), { kind: 'found', route: 'one', params: { hrs_id: 'BERLA' } });
  t.match(r.match('HEAD', '/v2/hrs/BERLA'), { kind: 'found', route: 'one' });
  t.same(r.match('DELETE', '/v2/hrs/BERLA'), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'OPTIONS'] });
  t.same(r.match('GET', '/import/v2/signal/usage/'), { kind: 'method-not-allowed', allow: ['POST', 'OPTIONS'] });
  t.same(r.match('POST', '/import/v2/signal/usage'), { kind: 'not-found', suggestion: '/import/v2/signal/usage/' });
  t.same(r.match('GET', '/v2/hrs/'), { kind: 'not-found', suggestion: '/v2/hrs' });
  t.same(r.match('GET', '/nothing'), { kind: 'not-found' });
  t.throws(() => r.add('GET', '/v2/hrs', 'again'), /registered twice/);
});

t.test('a parameter that cannot be an id matches nothing: NUL, lone surrogate, invalid percent-encoding', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v2/hrs/:hrs_id', 'one');
  r.add('GET', '/v2/hrs/:hrs_id/events', 'events');
  for (const bad of ['BERLA%00', '%00', 'BER%00LA', '%ED%A0%80', 'A%E0%A4%A', '%zz', 'a%', '\u0000', 'a\ud800b', '\udfff']) {
    t.same(r.match('GET', `/v2/hrs/${bad}`), { kind: 'not-found' }, `/v2/hrs/${JSON.stringify(bad)}`);
    t.same(r.match('GET', `/v2/hrs/${bad}/events`), { kind: 'not-found' }, `/v2/hrs/${JSON.stringify(bad)}/events`);
  }
  t.match(r.match('GET', '/v2/hrs/%F0%9F%98%80'), { kind: 'found', params: { hrs_id: '\u{1f600}' } }, 'a surrogate pair is fine');
  t.match(r.match('GET', '/v2/hrs/caf%C3%A9'), { kind: 'found', params: { hrs_id: 'café' } });
});

t.test('TRACE is known and never routed: 405 with Allow where the path exists', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/v2/hrs', 'list');
  t.same(r.match('TRACE', '/v2/hrs'), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'OPTIONS'] });
  t.same(r.match('TRACE', '/v2/nothing'), { kind: 'not-found' });
});

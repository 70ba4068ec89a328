import t from 'tap';
import { Router } from '../src/http/router.js';

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

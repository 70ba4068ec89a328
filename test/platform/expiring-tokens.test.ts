/**
 * The admins' live feed lists the tokens expiring within 30 days: in the snapshot (once read) and in an
 * `expiring_tokens` message whenever the list changes (a revocation, a token made, each snapshot read
 * again). Every kind (import, legacy export, personal), with its originator or owner and its expiry;
 * revoked tokens, tokens of deactivated owners and tokens expiring later are not listed; never a value.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { baseFixture } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { WsClient } from '../helpers/ws.js';

async function insertToken(
  p: TestPlatform,
  t: { generation: string; originator?: string; user?: string; name: string; hint?: string; expiresInDays: number; revoked?: boolean },
): Promise<{ id: string; value: string }> {
  const value = `hrs_test_${t.name}_${Math.random().toString(36).slice(2)}_value`;
  const hash = createHash('sha256').update(value).digest();
  const [row] = await p.sql<{ id: string }[]>`
    INSERT INTO tokens (generation, originator_id, user_id, name, hash, hint, created_at, expires_at, revoked_at)
    VALUES (${t.generation}, ${t.originator ?? null}, ${t.user ?? null}, ${t.name}, ${hash}, ${t.hint ?? null}, now() - interval '300 days',
            now() + ${`${t.expiresInDays} days`}::interval, ${t.revoked ? new Date() : null})
    RETURNING id::text`;
  return { id: row!.id, value };
}

const feed = async (p: TestPlatform) => {
  const ws = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
  return ws;
};

/** The list the feed holds once it has been read: the snapshot's, or the next `expiring_tokens` message's. */
async function listed(t: { equal(a: unknown, b: unknown, m: string): void }, ws: WsClient): Promise<Record<string, any>[]> {
  const snapshot = await ws.nextOf('snapshot');
  if (Array.isArray(snapshot.expiring_tokens)) return snapshot.expiring_tokens;
  t.equal(snapshot.expiring_tokens, null, 'not read yet: null');
  return (await ws.nextOf('expiring_tokens', 10_000)).tokens;
}

t.test('the feed lists the tokens expiring within 30 days, and follows a revocation', async (t) => {
  const p = await startTestPlatform(t, { fixture: baseFixture() });
  await p.sql`INSERT INTO users (id, email, deactivated_at) VALUES ('bob', 'bob@example.org', now())`;
  const imp = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'ci-north', hint: 'AbCd', expiresInDays: 20 });
  const legacy = await insertToken(p, { generation: 'export_v1', name: 'old-client', expiresInDays: 6 });
  const personal = await insertToken(p, { generation: 'export_v2', user: 'alice', name: 'phone', hint: 'PpPp', expiresInDays: 3 });
  await insertToken(p, { generation: 'import_v1', originator: 'mon-1', name: 'revoked-one', expiresInDays: 5, revoked: true });
  await insertToken(p, { generation: 'import_v1', originator: 'mon-1', name: 'later', expiresInDays: 40 });
  await insertToken(p, { generation: 'export_v2', user: 'bob', name: 'deactivated-owner', hint: 'DdDd', expiresInDays: 4 });

  const ws = await feed(p);
  t.teardown(() => ws.close());
  const list = await listed(t, ws);
  t.same(list.map((x) => x.name), ['phone', 'old-client', 'ci-north'], 'soonest first; revoked, later and deactivated owners left out');
  t.match(list[2], {
    id: imp.id,
    kind: 'import_v2',
    name: 'ci-north',
    hint: 'AbCd',
    originator: { id: 'mon-1', name: 'Monitoring One' },
    user: null,
    source: 'portal',
  });
  t.match(list[1], { id: legacy.id, kind: 'export_v1', originator: null, user: null, source: 'registry', hint: null });
  t.match(list[0], { id: personal.id, kind: 'export_v2', user: { id: 'alice', email: 'alice@example.org' } });
  const [row] = await p.sql<{ expires_at: Date }[]>`SELECT expires_at FROM tokens WHERE id = ${imp.id}`;
  t.equal(list[2]!.expires_at, row!.expires_at.toISOString(), 'its expiry');
  const text = JSON.stringify(list);
  for (const token of [imp, legacy, personal]) t.notOk(text.includes(token.value), 'never a value');

  // Revoked through the admin API: every admin gets the list again without it.
  const res = await fetch(`${p.url}/admin/v1/tokens/${legacy.id}/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(res.status, 200);
  const after = await ws.nextOf('expiring_tokens', 10_000);
  t.same(after.tokens.map((x: { name: string }) => x.name), ['phone', 'ci-north'], 'the revoked token leaves the list');
  t.equal(after.within_days, 30);

  // A second admin: the snapshot carries the list as last read.
  const second = await feed(p);
  t.teardown(() => second.close());
  const snapshot = await second.nextOf('snapshot');
  t.same(snapshot.expiring_tokens.map((x: { name: string }) => x.name), ['phone', 'ci-north'], 'in the snapshot');
});

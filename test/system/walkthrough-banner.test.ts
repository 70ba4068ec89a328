/**
 * What the walk-throughs read from `hrs demo` (test/helpers/demo-process.ts): the banner's fields by
 * what each line says, and a sign-in link from the terminal's `sign-in link for <email>: <url>` line
 * when the demo prints one, else from the quoted-printable `.eml` the demo's mail sink kept.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import { findSignInLink, parseBanner } from '../helpers/demo-process.js';

const BANNER = `HRS signal platform demo on http://127.0.0.1:4321: 12 stations, signals every 60 s.
  public map: http://127.0.0.1:4321/ (no token; the feed: http://127.0.0.1:4321/map/v1/stations.geojson)
  export v2 token: demo-export-v2-token (also the DATEX II publications: http://127.0.0.1:4321/datex2/v3/table and http://127.0.0.1:4321/datex2/v3/status)
  live dashboard: http://127.0.0.1:4321/admin/ (admin token: demo-admin-token-0001)
  portal: http://127.0.0.1:4321/portal/ (sign in with a link e-mailed to demo-user@demo-h2.example: API tokens; staff@demo-h2.example: operator staff; manager@demo-monitoring.example: originator manager)
  e-mails: SMTP_URL is not set, so they go to a local SMTP sink and are kept as .eml files in /tmp/state/demo-mail
Stop with Ctrl-C.
`;

t.test('the banner\'s fields, read by what each line says', async (t) => {
  t.same(parseBanner(BANNER), {
    base: 'http://127.0.0.1:4321',
    exportV2Token: 'demo-export-v2-token',
    dashboard: 'http://127.0.0.1:4321/admin/',
    adminToken: 'demo-admin-token-0001',
    portal: 'http://127.0.0.1:4321/portal/',
    accounts: { tokenOwner: 'demo-user@demo-h2.example', staff: 'staff@demo-h2.example', manager: 'manager@demo-monitoring.example' },
    mailFolder: '/tmp/state/demo-mail',
    map: { page: 'http://127.0.0.1:4321/', feed: 'http://127.0.0.1:4321/map/v1/stations.geojson' },
  });
  const reworded = BANNER.replace(
    /  portal: .*\n/,
    '  portal: http://127.0.0.1:4321/portal/\n    API tokens: demo-user@demo-h2.example\n    operator staff: staff@demo-h2.example\n    originator manager: manager@demo-monitoring.example\n',
  ).replace('kept as .eml files in /tmp/state/demo-mail', 'kept as .eml and .txt files in /tmp/state/demo-mail.');
  t.match(parseBanner(reworded), { accounts: { tokenOwner: 'demo-user@demo-h2.example', staff: 'staff@demo-h2.example', manager: 'manager@demo-monitoring.example' }, mailFolder: '/tmp/state/demo-mail' }, 'an account per line, role first');
  t.same(
    parseBanner(BANNER.replace(/  public map: .*\n/, '  public map: http://127.0.0.1:4321/\n    its feed: http://127.0.0.1:4321/map/v1/stations.geojson.\n'))?.map,
    { page: 'http://127.0.0.1:4321/', feed: 'http://127.0.0.1:4321/map/v1/stations.geojson' },
    'the feed on a line of its own',
  );
  t.same(
    parseBanner(BANNER.replace(/  public map: .*\n/, '  public map: http://127.0.0.1:4321/ (the feed: http://127.0.0.1:4321/map/v1/stations.geojson, no token)\n'))?.map,
    { page: 'http://127.0.0.1:4321/', feed: 'http://127.0.0.1:4321/map/v1/stations.geojson' },
    'its words in another order',
  );
  const noMap = parseBanner(BANNER.replace(/  public map: .*\n/, ''));
  t.equal(noMap?.portal, 'http://127.0.0.1:4321/portal/', 'complete without the public map\'s line (PUBLIC_MAP=false)');
  t.equal(noMap?.map, undefined, 'the map is then undefined');
  t.equal(parseBanner(BANNER.replace(/  live dashboard: .*\n/, '')), undefined, 'not complete without the dashboard\'s line');
  t.equal(parseBanner(BANNER.replace(/operator staff/, 'staff')), undefined, 'nor without an account of each role');
});

/** The message as the demo's mail sink keeps it: the text part quoted-printable, its long lines cut with `=`. */
async function eml(to: string, link: string, date: Date): Promise<Buffer> {
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const padding = 'x'.repeat(70);
  const sent = await transport.sendMail({ from: 'hrs@example.test', to, date, subject: 'Sign in', text: `Hello ${padding},\n\nUse this link to sign in: ${link}?${padding}\n\nThé HRS signal platform\n` });
  return sent.message as Buffer;
}

t.test('a sign-in link: the terminal\'s line after the mark, else the newest e-mail to the address', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'hrs-walk-mail-'));
  t.teardown(() => rmSync(folder, { recursive: true, force: true }));
  const email = 'demo-user@demo-h2.example';
  const link = (secret: string) => `http://127.0.0.1:4321/portal/#sign-in=${secret}`;
  const mark = { output: 0, time: Date.now() };

  t.equal(await findSignInLink('', folder, email, mark), undefined, 'nothing yet');
  const raw = await eml(email, link('A-very_long-secret-0123456789abcdefghijklmnopqrstuvwxyz0123456789'), new Date());
  t.match(raw.toString(), /Content-Transfer-Encoding: quoted-printable/, 'the test message is quoted-printable');
  t.match(raw.toString(), /=\r\n/, 'with soft line breaks');
  t.match(raw.toString(), /#sign-in=3D/, 'and its "=" encoded');
  writeFileSync(join(folder, '2026-01-01T00-00-02-0002-Sign-in.eml'), raw);
  writeFileSync(join(folder, '2026-01-01T00-00-03-0003-Sign-in.eml'), await eml('staff@demo-h2.example', link('for-someone-else'), new Date()));
  // Listed last, but sent before the mark: a link asked for earlier.
  writeFileSync(join(folder, '2026-01-01T00-00-04-0004-Sign-in.eml'), await eml(email, link('an-old-one'), new Date(mark.time - 60_000)));
  t.equal(await findSignInLink('', folder, email, mark), link('A-very_long-secret-0123456789abcdefghijklmnopqrstuvwxyz0123456789'), 'decoded from the e-mail to the address, sent after the mark');
  t.equal(await findSignInLink('', folder, 'nobody@demo-h2.example', mark), undefined, 'none for an address with no e-mail');

  const earlier = `  sign-in link for ${email}: ${link('printed-before-the-mark')}\n`;
  const output = `${earlier}  sign-in link for staff@demo-h2.example: ${link('staff-secret')}\n  sign-in link for ${email}: ${link('printed-secret')}\n`;
  t.equal(await findSignInLink(output, folder, email, { output: earlier.length, time: mark.time }), link('printed-secret'), 'the terminal\'s line when there is one');
  t.equal(await findSignInLink(earlier, folder, email, { output: earlier.length, time: mark.time }), link('A-very_long-secret-0123456789abcdefghijklmnopqrstuvwxyz0123456789'), 'a line from before the mark does not count');
});

/**
 * The demo's terminal: quiet by default (warnings only, no JSON request lines), one summary line per
 * interval with the platform's own counts, the banner again on SIGUSR2 and on Enter, each sign-in link
 * printed as it is e-mailed, and each kept `.eml` with its decoded text beside it as `.txt`.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEMO_TOKENS, DEMO_USER_EMAIL } from '../../src/cli/demo/fixture.js';
import { signalCounts, summaryLine } from '../../src/cli/demo/terminal.js';
import { stationStateOf, stationVerdict } from '../../src/domain/status/verdict.js';
import { demoSetting, startDemo, stopDemo, type DemoProcess } from '../helpers/demo.js';
import { ROOT, hrs } from '../helpers/process.js';
import { until } from '../helpers/wait.js';

const SUMMARY = /^\d\d:\d\d:\d\d last 2 s: (\d+) signals? accepted, (\d+) refused · 12 stations: (.+)$/gm;

/** The summary lines written since `mark`, as [accepted, refused, states]. */
function summaries(demo: DemoProcess, mark = 0): [number, number, string][] {
  return [...demo.since(mark).matchAll(SUMMARY)].map((m) => [Number(m[1]), Number(m[2]), m[3]!]);
}

/** Waits for the banner to be printed again after `mark`. */
async function bannerAgain(demo: DemoProcess, mark: number, what: string): Promise<string> {
  return until(what, () => {
    const text = demo.since(mark);
    return /Stop with Ctrl-C/.test(text) ? text : undefined;
  }, 20_000);
}

t.test('hrs demo: quiet logs, a summary per interval, the banner on request, sign-in links in the terminal and as .txt', async (t) => {
  const setting = await demoSetting(t, { LOG_LEVEL: undefined, SANDBOX: 'off' });
  const demo = await startDemo(t, setting, ['--interval', '1', '--summary-interval', '2']);
  const url = demo.url;
  const banner = demo.output();
  t.match(banner, /^Stop with Ctrl-C\. Press Enter \(or kill -USR2 \d+\) to see this again; a summary follows every 2 s\.$/m, 'the banner\'s last line says how to see it again');

  // The summary: what the platform counted (a refused transmission of ours included), stations by state.
  const mark = demo.output().length;
  const refused = await fetch(`${url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${DEMO_TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify([{ hrs: 'NOSUCH', datetime: new Date().toISOString(), nozzles: [], station: { maintenance: false, limitedly_available: false } }]),
  });
  t.equal(refused.status, 400, 'a transmission the platform refuses');
  const lines = await until('summary lines counting accepted and refused signals', () => {
    const found = summaries(demo, mark);
    return found.some(([accepted]) => accepted > 0) && found.some(([, refusedCount]) => refusedCount > 0) ? found : undefined;
  }, 30_000);
  t.ok(lines.some(([accepted]) => accepted >= 12), 'signals the platform accepted in an interval');
  t.ok(lines.some(([, n]) => n >= 1), 'the refused transmission is counted (the platform\'s count, not the simulated originator\'s)');
  for (const [, , states] of lines) {
    const counted = states.split(', ').map((s) => Number(/^(\d+) /.exec(s)?.[1]));
    t.equal(counted.reduce((a, b) => a + b, 0), 12, `the states add up to the twelve stations: ${states}`);
  }

  // SIGUSR2 and Enter: the banner again.
  let at = demo.output().length;
  demo.child.kill('SIGUSR2');
  const again = await bannerAgain(demo, at, 'the banner after SIGUSR2');
  t.match(again, new RegExp(`live dashboard: ${url}/admin/`), 'SIGUSR2: the dashboard\'s address again');
  t.match(again, new RegExp(`portal: ${url}/portal/`), 'and the portal\'s');
  at = demo.output().length;
  demo.child.stdin!.write('\n');
  const entered = await bannerAgain(demo, at, 'the banner after Enter');
  t.match(entered, new RegExp(`export v2 token: ${DEMO_TOKENS.export_v2}`), 'Enter: the banner again');

  // A sign-in: its link printed in the terminal, and whole in the .txt beside the .eml.
  at = demo.output().length;
  const asked = await fetch(`${url}/portal/v1/sign-in`, {
    method: 'POST',
    headers: { Origin: url, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: DEMO_USER_EMAIL }),
  });
  t.equal(asked.status, 202);
  const line = await until('the sign-in line', () => demo.since(at).split('\n').find((l) => l.includes('sign-in link for')), 30_000);
  const printed = new RegExp(`^  sign-in link for ${DEMO_USER_EMAIL.replace(/\./g, '\\.')}: (${url}/portal/#sign-in=[\\w-]+)$`).exec(line);
  t.ok(printed, `one line in the documented format: ${line}`);
  const link = printed![1]!;
  const folder = /kept as \.eml files in (\S+)/.exec(banner)![1]!;
  const names = await readdir(folder);
  const eml = names.filter((n) => n.endsWith('.eml'));
  t.equal(eml.length, 1, 'one e-mail kept');
  t.ok(names.includes(eml[0]!.replace(/\.eml$/, '.txt')), 'a .txt beside it, of the same name');
  const text = await readFile(join(folder, eml[0]!.replace(/\.eml$/, '.txt')), 'utf8');
  t.ok(text.split('\n').some((l) => l.trim() === link), 'the .txt holds the link unbroken, on a line of its own');
  t.match(text, /Use this link to sign in to the HRS portal/, 'the decoded text of the e-mail');
  const raw = await readFile(join(folder, eml[0]!), 'utf8');
  t.match(raw, /^To: demo-user@demo-h2\.example/m, 'the .eml is the message as received');
  const opened = await fetch(`${url}/portal/v1/session`, {
    method: 'POST',
    headers: { Origin: url, 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: /#sign-in=([\w-]+)$/.exec(link)![1] }),
  });
  t.equal(opened.status, 201, 'the printed link signs in');

  // Requests were answered all along: none was logged at the default level.
  await fetch(`${url}/v2/fuel-type`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v2}` } });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const outputLines = demo.output().split('\n');
  t.same(outputLines.filter((l) => l.startsWith('{')), [], 'no JSON lines: the terminal is for people (LOG_LEVEL set brings the JSON logs back)');
  t.same(outputLines.filter((l) => /^\d\d:\d\d:\d\d (trace|debug|info): /.test(l)), [], 'nothing under warn, so no request lines (requests are logged at info)');
  t.same(await stopDemo(demo), { code: 0, signal: null }, 'stops cleanly');
});

t.test('the summary line, the signal counts from /metrics and a station\'s state', async (t) => {
  const metrics = [
    '# HELP hrs_import_v2_transmissions_total Import v2 transmissions',
    'hrs_import_v2_transmissions_total{category="availability",outcome="accepted"} 40',
    'hrs_import_v2_transmissions_total{category="usage",outcome="rejected"} 2',
    'hrs_import_v2_transmissions_total{category="usage",outcome="dry_run"} 7',
    'hrs_import_v1_signals_total{family="import_v1.1",outcome="accepted"} 8',
    'hrs_import_v1_signals_total{family="import_v1.1",outcome="rejected"} 1',
    'hrs_http_requests_total{family="import-v2",route="/x",method="POST",status="204"} 99',
  ].join('\n');
  t.same(signalCounts(metrics), { accepted: 48, refused: 3 }, 'accepted and refused of both imports; dry runs and requests are neither');
  t.same(signalCounts(''), { accepted: 0, refused: 0 });
  const at = new Date(2026, 10, 26, 12, 3, 9);
  t.equal(
    summaryLine(at, 60, { accepted: 48, refused: 2 }, ['available', 'available', 'unavailable', 'unknown', 'limited']),
    '12:03 last minute: 48 signals accepted, 2 refused · 5 stations: 2 available, 1 limitedly available, 1 unavailable, 1 unknown',
  );
  t.equal(summaryLine(at, 5, { accepted: 1, refused: 0 }, ['unknown']), '12:03:09 last 5 s: 1 signal accepted, 0 refused · 1 station: 1 unknown', 'seconds under a minute');
  t.equal(summaryLine(at, 300, undefined, []), '12:03 last 5 minutes: signals not counted · 0 stations');
  t.equal(
    summaryLine(at, 60, { accepted: 3, refused: 0 }, ['closed', 'available', 'closed']),
    '12:03 last minute: 3 signals accepted, 0 refused · 3 stations: 1 available, 2 closed',
    'closed stations are counted as closed',
  );
  // The line counts the stations by their verdicts, as the dashboard does.
  t.equal(stationStateOf(undefined), 'unknown', 'no verdict (a station that left)');
  const closed = stationVerdict([{ fuelling_option: '700ld', status: 'CLOSED', reason: 'outside_opening_hours', datetime: null }], false, null, null);
  t.equal(stationStateOf(closed), 'closed', 'a station outside its hours');
  const limited = stationVerdict([{ fuelling_option: '700ld', status: 'LIMITEDLY_AVAILABLE', reason: 'limited', datetime: null }], true, 'fresh', null);
  t.equal(stationStateOf(limited), 'limited');
});

/** Whether util-linux's `script` is here to give a program a terminal with job control. */
const hasScript = spawnSync('script', ['--version']).status === 0;

t.test('Enter on the terminal asks for the banner in the foreground; in the background the terminal is left alone', { skip: hasScript ? false : 'needs util-linux script for a terminal' }, async (t) => {
  const program = `${process.execPath} --import tsx ${join(ROOT, 'test/helpers/demo-asked.ts')}`;
  const shell = spawn('script', ['-qec', 'bash --norc --noprofile -i', '/dev/null'], { cwd: ROOT, env: { ...process.env, PS1: '$ ' }, stdio: ['pipe', 'pipe', 'pipe'] });
  t.teardown(() => shell.kill('SIGKILL'));
  let output = '';
  shell.stdout.on('data', (d) => (output += d));
  const seen = (pattern: RegExp, what: string) => until(what, () => (pattern.test(output) ? true : undefined), 30_000);
  shell.stdin.write(`${program} 3000\n`);
  await seen(/LISTENING \d+/, 'the program in the foreground');
  shell.stdin.write('\n');
  await seen(/ASKED/, 'Enter asking for the banner');
  await seen(/DONE/, 'the foreground program ending');
  const order = ['LISTENING', 'ASKED', 'DONE'].map((word) => output.indexOf(word));
  t.same([...order].sort((x, y) => x - y), order, `in the foreground, Enter asks, before the program ends (at ${order.join(', ')})`);
  const mark = output.length;
  shell.stdin.write(`${program} 3000 &\n`);
  await until('the program in the background', () => (/LISTENING \d+/.test(output.slice(mark)) ? true : undefined), 30_000);
  shell.stdin.write('\n');
  await new Promise((resolve) => setTimeout(resolve, 5000));
  shell.stdin.write('jobs -l; exit\n');
  await new Promise((resolve) => shell.on('exit', resolve));
  const after = output.slice(mark);
  t.notMatch(after, /Stopped/, 'a background job is not stopped by reading the terminal');
  t.match(after, /DONE/, 'it runs to its end');
  t.notMatch(after, /ASKED/, 'and the Enter typed for the shell was not taken');
});

t.test('hrs demo --help documents --reset, the summary and how to see the banner again; a wrong interval is a usage error', async (t) => {
  const help = await hrs(['demo', '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: hrs demo \[--interval SECONDS\] \[--summary-interval SECONDS\] \[--reset\] \[--embedded\]$/m);
  t.match(help.stdout, /loaded only into an empty registry/, 'when the demo file is loaded');
  t.match(help.stdout, /--reset loads the demo file again/, '--reset');
  t.match(help.stdout, /logs at warn unless LOG_LEVEL is set/, 'the log level');
  t.match(help.stdout, /Press Enter in the terminal \(or send the process SIGUSR2\)/, 'how to see the banner again');
  t.match(help.stdout, /"  sign-in link for EMAIL: URL"/, 'the sign-in line');
  t.match(help.stdout, /"  alert confirmation link for EMAIL: URL"/, 'the alert confirmation line');
  for (const value of ['0', '1.5', 'soon', '3601']) {
    const wrong = await hrs(['demo', '--summary-interval', value]);
    t.equal(wrong.code, 2, `--summary-interval ${value}: exit 2`);
    t.match(wrong.stderr, /^hrs: --summary-interval must be a whole number of seconds from 1 to 3600$/m);
  }
});

import { join } from 'node:path';
import { unbounded } from '../../../db/deadline.js';
import { SANDBOX_STATIONS, SANDBOX_TOKEN } from '../../domain/sandbox.js';
import { registryMessage } from '../../infra/bus.js';
import { ensureStateDir, stateDir } from '../../local/state.js';
import { demoWebhookKey } from '../demo/webhook-key.js';
import { startPlatform } from '../../platform.js';
import { loadFixture, loadFixtureIntoEmpty } from '../../registry/file/load.js';
import { UsageError, untilSignal, type Command } from '../command.js';
import { DEMO_USER_EMAIL, DEMO_OPERATOR_EMAIL, DEMO_MANAGER_EMAIL, DEMO_ADMIN_TOKEN, DEMO_LEGACY_STATIONS, DEMO_TOKENS, demoFixture } from '../demo/fixture.js';
import { startDemoMailSink, type DemoMailSink, type KeptMail } from '../demo/mail-sink.js';
import { backfillDemoHistory } from '../demo/backfill.js';
import { DemoOriginator } from '../demo/originator.js';
import { simulatedStations } from '../demo/simulated.js';
import { startSummaries, whenAsked } from '../demo/terminal.js';
import { SERVERS_HELP, configWithServers, serversInUseLines } from '../servers.js';

/** The sign-in link of a portal sign-in e-mail's text, when it is one. */
const SIGN_IN_LINK = /https?:\/\/\S+\/portal\/#sign-in=[\w-]+/;

/** The confirmation link of a driver alert's first e-mail, when it is one. */
const ALERT_CONFIRM_LINK = /https?:\/\/\S+\/map\/alerts\/confirm\?token=[\w-]+/;

/**
 * The line the demo prints for a sign-in e-mail its sink kept (a browser test parses it: keep the
 * format), or for a driver alert's confirmation (asked on the map's station panel).
 */
function signInLine(mail: KeptMail): string | undefined {
  const link = SIGN_IN_LINK.exec(mail.text)?.[0];
  if (link !== undefined) return `  sign-in link for ${mail.to.join(', ')}: ${link}`;
  const confirm = ALERT_CONFIRM_LINK.exec(mail.text)?.[0];
  return confirm === undefined ? undefined : `  alert confirmation link for ${mail.to.join(', ')}: ${confirm}`;
}

/** A whole number of seconds from `value` (default `fallback`), within bounds, or a usage error naming the option. */
function seconds(value: unknown, fallback: number, option: string, min: number): number {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(n) || n < min || n > 3600) throw new UsageError(`--${option} must be a whole number of seconds from ${min} to 3600`);
  return n;
}

/** `hrs demo`: `hrs serve` with the demo fixture, a simulated originator, and a mail sink when no SMTP is set. */
export const demo: Command = {
  summary: 'serve the platform with a demo registry and a simulated originator posting live signals',
  usage: 'hrs demo [--interval SECONDS] [--summary-interval SECONDS] [--reset] [--embedded]',
  help:
    'Does what `hrs serve` does, with a demo fixture loaded (a dozen stations, an originator live on all four\n' +
    'signal types, export tokens printed) and a simulated monitoring system posting realistic, changing\n' +
    'signals for every station through the import v2 API every interval (default 60 s) until stopped.\n\n' +
    'The demo file is loaded only into an empty registry (no station but the sandbox\'s, no token): what\n' +
    'was changed in the portal or the admin API (names, layouts, events, photos, call-log modes, tokens)\n' +
    'stays as it was across runs. --reset loads the demo file again over everything it describes, as\n' +
    '`hrs load` would (its operator, stations, originators, assignments, accounts and tokens; a revoked\n' +
    'token stays revoked; signals and the audit trail stay), and the banner says so.\n\n' +
    'The terminal stays quiet: logs at warn unless LOG_LEVEL is set, and one summary line every\n' +
    '--summary-interval seconds (default 60): signals the platform accepted and refused, stations by state.\n' +
    'Press Enter in the terminal (or send the process SIGUSR2) to print the banner with its addresses again.\n' +
    'Without SMTP_URL, e-mails are kept as .eml files (with the decoded text beside each as .txt) and each\n' +
    'portal sign-in link is printed as it is sent: "  sign-in link for EMAIL: URL" (a driver alert\'s\n' +
    'confirmation link, asked on the map, as "  alert confirmation link for EMAIL: URL").\n\n' +
    SERVERS_HELP,
  options: { interval: { type: 'string' }, 'summary-interval': { type: 'string' }, reset: { type: 'boolean' }, embedded: { type: 'boolean' } },
  positionals: 0,
  async run({ values }, io) {
    const interval = values.interval === undefined ? 60 : Number(values.interval);
    if (!Number.isFinite(interval) || interval < 1 || interval > 3600) {
      throw new UsageError('--interval must be a number of seconds from 1 to 3600');
    }
    const summaryEvery = seconds(values['summary-interval'], 60, 'summary-interval', 1);
    const reset = values.reset === true;
    const { config: configured, local } = await configWithServers(io, values.embedded === true, io.out);
    // A demo shows the admins' dashboard too: without ADMIN_TOKEN it gets the demo's own.
    const config = { ...configured };
    config.adminToken ??= DEMO_ADMIN_TOKEN;
    // A demo's terminal is for its banner and summaries: warnings only, each one line for people, unless
    // LOG_LEVEL says otherwise (then the JSON logs, as `hrs serve` writes them).
    const quiet = io.env.LOG_LEVEL === undefined || io.env.LOG_LEVEL === '';
    if (quiet) config.logLevel = 'warn';
    // And its e-mails: without SMTP_URL they go to a local SMTP sink that keeps them as files.
    let sink: DemoMailSink | undefined;
    if (config.smtpUrl === undefined) {
      const dir = stateDir(io.env);
      ensureStateDir(dir);
      sink = await startDemoMailSink(join(dir, 'demo-mail'), (mail) => {
        const line = signInLine(mail);
        if (line !== undefined) io.out(line);
      });
      config.smtpUrl = sink.url;
    }
    // And webhooks: without WEBHOOK_SECRET_KEY the demo seals their secrets with a key of its own, kept in
    // the state folder, and lets them reach receivers on this machine (loopback) unless told otherwise.
    let webhookKeyFile: string | undefined;
    if (config.webhookSecretKey === undefined) {
      const dir = stateDir(io.env);
      ensureStateDir(dir);
      webhookKeyFile = join(dir, 'demo-webhook-key');
      config.webhookSecretKey = demoWebhookKey(webhookKeyFile);
      if (io.env.WEBHOOK_ALLOW_LOOPBACK === undefined || io.env.WEBHOOK_ALLOW_LOOPBACK === '') config.webhookAllowLoopback = true;
    }
    const log = io.logger(config, quiet ? io.err : undefined);
    let platform;
    try {
      platform = await startPlatform(config, log);
    } catch (err) {
      await sink?.close();
      await local.stop();
      throw err;
    }
    const fixture = demoFixture();
    const { registry, verdicts } = platform.parts;
    // The demo file's stations as the registry has them now, layout edits included (./simulated.ts).
    const simulatedNow = () => simulatedStations(fixture.stations, (id) => registry.station(id));
    let loaded;
    try {
      // One transaction that may take longer than a request may wait for the database. Without --reset,
      // only into an empty registry: a restart never reverts what was edited since.
      const load = reset ? loadFixture : loadFixtureIntoEmpty;
      loaded = await load(unbounded(platform.parts.sql), fixture, { baseDir: process.cwd() });
      if (loaded !== null) {
        await platform.parts.bus.publish(registryMessage({ hrsIds: fixture.stations.map((s) => s.hrs_id), tokens: true }));
        await registry.reload();
      }
      // The week of history (only into a history with none): of the stations as the registry has them.
      await backfillDemoHistory(platform.parts, { stations: simulatedNow() }, { say: io.out });
    } catch (err) {
      await platform.stop('demo could not start');
      await local.stop();
      throw err;
    }
    const stationIds = () => [...registry.stationIds()].filter((id) => registry.station(id)?.sandbox === false);
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const own = `http://${host}:${platform.port}`;
    // The simulated originator reports the layouts as confirmed now (edits included), and follows them.
    const simulated = simulatedNow();
    registry.onReload(() => void simulated.splice(0, simulated.length, ...simulatedNow()));
    const originator = new DemoOriginator(own, DEMO_TOKENS.import_v2, simulated, interval * 1000, log, DEMO_LEGACY_STATIONS, DEMO_TOKENS.import_v1);
    originator.start();
    const base = platform.baseUrl;
    const banner = () =>
      [
        `HRS signal platform demo on ${base}: ${stationIds().length} stations, signals every ${interval} s.`,
        // Which PostgreSQL and Redis, and whether they were started here or found running (the namespace settled at start).
        ...serversInUseLines(io.env, local, platform.parts.config),
        reset
          ? '  registry: the demo file loaded again over its operator, stations, originators, accounts and tokens (--reset)'
          : loaded !== null
            ? '  registry: the demo file, loaded into the empty registry; edits in the portal and admin API are kept across runs'
            : simulated.length > 0
              ? '  registry: kept as it was, edits included (`hrs demo --reset` loads the demo file again over them)'
              : '  registry: kept as it was; it holds none of the demo\'s stations, so the tokens below are unknown to it (`hrs demo --reset` loads the demo file into it)',
        ...(config.publicMap ? [`  public map: ${base}/ (no token; the feed: ${base}/map/v1/stations.geojson)`] : []),
        `  export v2 token: ${DEMO_TOKENS.export_v2} (also the DATEX II publications: ${base}/datex2/v3/table and ${base}/datex2/v3/status)`,
        `  export v1/v1.1 token: ${DEMO_TOKENS.export_v1} (the five-state summary: ${base}/v1.1/hrs/status)`,
        `  import v2 token: ${DEMO_TOKENS.import_v2}`,
        `  import v1/v1.1 token: ${DEMO_TOKENS.import_v1} (the legacy originator reports ${DEMO_LEGACY_STATIONS.join(', ')} through import v1.1)`,
        ...(config.sandbox
          ? [`  export v1.1 sandbox token: ${SANDBOX_TOKEN} (public; ${SANDBOX_STATIONS.length} sample stations with simulated signals: ${base}/v1.1/hrs/status)`]
          : []),
        `  live dashboard: ${base}/admin/ (admin token: ${config.adminToken === DEMO_ADMIN_TOKEN ? DEMO_ADMIN_TOKEN : 'the ADMIN_TOKEN you set'})`,
        `  portal: ${base}/portal/ (sign in with a link e-mailed to ${DEMO_USER_EMAIL}: API tokens; ${DEMO_OPERATOR_EMAIL}: operator staff; ${DEMO_MANAGER_EMAIL}: originator manager)`,
        sink
          ? `  e-mails: SMTP_URL is not set, so they go to a local SMTP sink and are kept as .eml files in ${sink.folder} (the text beside each as .txt; sign-in links are printed here too)`
          : '  e-mails: sent through SMTP_URL',
        webhookKeyFile
          ? `  webhooks: on the portal's Webhooks page (their secrets sealed with a key kept in ${webhookKeyFile}${config.webhookAllowLoopback ? '; receivers on this machine allowed' : ''})`
          : '  webhooks: on the portal\'s Webhooks page (secrets sealed with WEBHOOK_SECRET_KEY)',
        `  try: curl -s -H 'Authorization: Bearer ${DEMO_TOKENS.export_v2}' ${base}/v2/fuel-type`,
        `       curl -s -H 'Authorization: Bearer ${DEMO_TOKENS.import_v2}' ${base}/import/v2/active-stations/`,
        `Stop with Ctrl-C. Press Enter (or kill -USR2 ${process.pid}) to see this again; a summary follows every ${summaryEvery === 60 ? 'minute' : `${summaryEvery} s`}.`,
      ].join('\n');
    io.out(banner());
    const stopAsking = whenAsked(() => io.out(banner()));
    const metricsToken = config.adminToken;
    const stopSummaries = startSummaries(summaryEvery, {
      metrics: () => fetch(`${own}/metrics`, { headers: { Authorization: `Bearer ${metricsToken}` }, signal: AbortSignal.timeout(5000) }).then((res) => {
        if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
        return res.text();
      }),
      verdicts: () => stationIds().map((id) => verdicts.of(id)),
    }, io.out);
    const running = platform;
    await untilSignal(log, async (signal) => {
      stopSummaries();
      stopAsking();
      await originator.stop();
      await running.stop(signal);
      await sink?.close();
      await local.stop();
    });
    return 0;
  },
};

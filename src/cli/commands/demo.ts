import { join } from 'node:path';
import { unbounded } from '../../../db/deadline.js';
import { SANDBOX_STATIONS, SANDBOX_TOKEN } from '../../domain/sandbox.js';
import { registryMessage } from '../../infra/bus.js';
import { ensureStateDir, stateDir } from '../../local/state.js';
import { startPlatform } from '../../platform.js';
import { loadFixture } from '../../registry/file/load.js';
import { UsageError, untilSignal, type Command } from '../command.js';
import { DEMO_USER_EMAIL, DEMO_OPERATOR_EMAIL, DEMO_MANAGER_EMAIL, DEMO_ADMIN_TOKEN, DEMO_LEGACY_STATIONS, DEMO_TOKENS, demoFixture } from '../demo/fixture.js';
import { startDemoMailSink, type DemoMailSink } from '../demo/mail-sink.js';
import { backfillDemoHistory } from '../demo/backfill.js';
import { DemoOriginator } from '../demo/originator.js';
import { SERVERS_HELP, configWithServers } from '../servers.js';

/** `hrs demo`: `hrs serve` with the demo fixture, a simulated originator, and a mail sink when no SMTP is set. */
export const demo: Command = {
  summary: 'serve the platform with a demo registry and a simulated originator posting live signals',
  usage: 'hrs demo [--interval SECONDS] [--embedded]',
  help:
    'Does what `hrs serve` does, with a demo fixture loaded (a dozen stations, an originator live on all four\n' +
    'signal types, export tokens printed) and a simulated monitoring system posting realistic, changing\n' +
    'signals for every station through the import v2 API every interval (default 60 s) until stopped.\n\n' +
    SERVERS_HELP,
  options: { interval: { type: 'string' }, embedded: { type: 'boolean' } },
  positionals: 0,
  async run({ values }, io) {
    const interval = values.interval === undefined ? 60 : Number(values.interval);
    if (!Number.isFinite(interval) || interval < 1 || interval > 3600) {
      throw new UsageError('--interval must be a number of seconds from 1 to 3600');
    }
    const { config: configured, local } = await configWithServers(io, values.embedded === true, io.out);
    // A demo shows the admins' dashboard too: without ADMIN_TOKEN it gets the demo's own.
    const config = { ...configured };
    config.adminToken ??= DEMO_ADMIN_TOKEN;
    // And its e-mails: without SMTP_URL they go to a local SMTP sink that keeps them as files.
    let sink: DemoMailSink | undefined;
    if (config.smtpUrl === undefined) {
      const dir = stateDir(io.env);
      ensureStateDir(dir);
      sink = await startDemoMailSink(join(dir, 'demo-mail'));
      config.smtpUrl = sink.url;
    }
    const log = io.logger(config);
    let platform;
    try {
      platform = await startPlatform(config, log);
    } catch (err) {
      await sink?.close();
      await local.stop();
      throw err;
    }
    const fixture = demoFixture();
    try {
      // One transaction that may take longer than a request may wait for the database.
      await loadFixture(unbounded(platform.parts.sql), fixture, { baseDir: process.cwd() });
      await platform.parts.bus.publish(registryMessage({ hrsIds: fixture.stations.map((s) => s.hrs_id), tokens: true }));
      await platform.parts.registry.reload();
      await backfillDemoHistory(platform.parts, fixture);
    } catch (err) {
      await platform.stop('demo could not start');
      await local.stop();
      throw err;
    }
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const originator = new DemoOriginator(`http://${host}:${platform.port}`, DEMO_TOKENS.import_v2, fixture.stations, interval * 1000, log, DEMO_LEGACY_STATIONS, DEMO_TOKENS.import_v1);
    originator.start();
    const base = platform.baseUrl;
    io.out(
      [
        `HRS signal platform demo on ${base}: ${fixture.stations.length} stations, signals every ${interval} s.`,
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
          ? `  e-mails: SMTP_URL is not set, so they go to a local SMTP sink and are kept as .eml files in ${sink.folder}`
          : '  e-mails: sent through SMTP_URL',
        `  try: curl -s -H 'Authorization: Bearer ${DEMO_TOKENS.export_v2}' ${base}/v2/fuel-type`,
        `       curl -s -H 'Authorization: Bearer ${DEMO_TOKENS.import_v2}' ${base}/import/v2/active-stations/`,
        'Stop with Ctrl-C.',
      ].join('\n'),
    );
    const running = platform;
    await untilSignal(log, async (signal) => {
      await originator.stop();
      await running.stop(signal);
      await sink?.close();
      await local.stop();
    });
    return 0;
  },
};

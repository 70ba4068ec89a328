import t from 'tap';
import { ensureDatabase, openDatabase } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { testConfig } from '../helpers/platform.js';
import { HRS, freePort, start, waitFor } from '../helpers/process.js';

async function untilLogged(output: () => string, msg: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === msg);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`"${msg}" was not logged; output: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

t.test('hrs worker runs the workers until SIGTERM, then exits 0', async (t) => {
  const config = testConfig(t);
  // The call-log worker writes to PostgreSQL: `hrs worker` expects a migrated database.
  await ensureDatabase(config.databaseUrl);
  const sql = await openDatabase(config.databaseUrl, { max: 1 });
  try {
    await migrate(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
  const smtpPort = await freePort();
  const worker = start(process.execPath, [HRS, 'worker'], {
    DATABASE_URL: config.databaseUrl,
    REDIS_PREFIX: config.redisPrefix,
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    LOG_LEVEL: 'info',
  });
  t.teardown(() => worker.child.kill('SIGKILL'));
  t.match(await untilLogged(worker.output, 'workers running'), { workers: ['mail', 'call-log'] });
  worker.child.kill('SIGTERM');
  t.same(await worker.exited, { code: 0, signal: null });
});

t.test('hrs serve runs the workers in-process unless --no-workers', async (t) => {
  const config = testConfig(t);
  for (const [args, expected] of [
    [['serve'], ['mail', 'call-log']],
    [['serve', '--no-workers'], []],
  ] as const) {
    const port = await freePort();
    const server = start(process.execPath, [HRS, ...args], {
      DATABASE_URL: config.databaseUrl,
      REDIS_PREFIX: config.redisPrefix,
      PORT: String(port),
      SMTP_URL: 'smtp://127.0.0.1:2525',
      LOG_LEVEL: 'info',
    });
    t.teardown(() => server.child.kill('SIGKILL'));
    await waitFor(`http://127.0.0.1:${port}/readyz`);
    t.match(await untilLogged(server.output, 'listening'), { workers: expected }, args.join(' '));
    server.child.kill('SIGTERM');
    t.equal((await server.exited).code, 0);
  }
});

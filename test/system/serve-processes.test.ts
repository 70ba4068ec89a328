import t from 'tap';
import { request } from 'node:http';
import { ADMIN_TOKEN, testConfig } from '../helpers/platform.js';
import { freePort, hrs, HRS, start, type Running } from '../helpers/process.js';
import { until } from '../helpers/wait.js';

/**
 * `hrs serve --processes 2`: two server processes share the port (the kernel spreads the connections),
 * one that dies is replaced while the other keeps answering, /metrics covers both, a busy port is
 * refused as without --processes, and SIGTERM stops them in order. One process set for the whole file.
 */

interface LogLine {
  msg: string;
  time: string;
  process?: number;
  pid?: number;
  pids?: number[];
  worker_pid?: number;
  path?: string;
  code?: number | null;
  signal?: string | null;
}

/** The JSON log lines the set wrote so far (the supervisor's and its processes'). */
function logs(running: Running): LogLine[] {
  return running.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine);
}

/** A GET on a connection of its own (so the kernel picks a process for each): the status, or the error's code. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

async function metrics(port: number): Promise<string> {
  const res = await get(port, '/metrics', { Authorization: `Bearer ${ADMIN_TOKEN}` });
  if (!('status' in res) || res.status !== 200) throw new Error(`/metrics: ${JSON.stringify(res)}`);
  return res.body;
}

/** The 40 readiness checks of the first subtest, over both processes (none is made after). */
const READYZ_40 = /^hrs_http_requests_total\{family="root",route="\/readyz",method="GET",status="200"\} 40$/m;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

t.test('hrs serve --processes 2', async (t) => {
  const config = testConfig(t);
  const port = await freePort();
  const env = {
    DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix,
    HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ADMIN_TOKEN, SANDBOX: 'off',
  };
  const set = start(process.execPath, [HRS, 'serve', '--processes', '2'], env);
  const seen = new Set<number>();
  t.teardown(async () => {
    // The processes run in groups of their own: none may outlive a failed test.
    for (const pid of [set.child.pid!, ...seen]) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  const ready = await until('the set to listen', () => logs(set).find((l) => l.msg === 'listening' && l.pids), 60_000);
  t.equal(ready.pids!.length, 2, 'two server processes');
  t.ok(ready.worker_pid, 'and one worker process (no --no-workers)');
  for (const pid of [...ready.pids!, ready.worker_pid!]) seen.add(pid);

  await t.test('the kernel spreads connections over both; /metrics adds them up', async (t) => {
    const before = logs(set).length;
    for (let i = 0; i < 40; i++) t.match(await get(port, '/readyz'), { status: 200 });
    // Each process writes its log lines when it can: all 40 are awaited.
    const answers = await until('the 40 request log lines', () => {
      const found = logs(set).slice(before).filter((l) => l.msg === 'request' && l.path === '/readyz');
      return found.length >= 40 ? found : undefined;
    });
    const answeredBy = new Set(answers.map((l) => l.process));
    t.same([...answeredBy].sort(), [1, 2], 'requests on 40 connections were answered by process 1 and by process 2');
    const text = await metrics(port);
    t.match(text, READYZ_40, 'counters: the sum over the processes');
    for (const slot of [1, 2]) t.match(text, new RegExp(`^process_start_time_seconds\\{process="${slot}"\\} \\d+`, 'm'), `gauges: process ${slot}'s own`);
    t.equal(text.match(/^hrs_build_info\{/gm)?.length, 1, 'a fact of the whole set: once');
    t.match(text, /^hrs_event_loop_stalls_total \d+/m, 'the event-loop stalls: the sum over the processes');
    for (const slot of [1, 2]) t.match(text, new RegExp(`^hrs_event_loop_delay_max_seconds\\{process="${slot}"\\} [\\d.e-]+`, 'm'), `the longest delay: process ${slot}'s own`);
    t.match(await get(port, '/metrics'), { status: 401 }, '/metrics still takes a token');
  });

  await t.test('a busy port is refused as without --processes', async (t) => {
    for (const args of [['serve', '--processes', '2'], ['serve', '--no-workers']]) {
      const r = await hrs(args, { ...env, LOG_LEVEL: 'warn' }, 30_000);
      t.equal(r.code, 1, `hrs ${args.join(' ')}: exit 1`);
      t.same(r.stderr.trim().split('\n'), [`hrs serve: cannot listen on 127.0.0.1:${port} (address in use or not available)`], 'one line on stderr');
    }
    t.match(await get(port, '/healthz'), { status: 200 }, 'the set goes on serving');
  });

  await t.test('a server process killed is replaced; the port answers throughout', async (t) => {
    const victim = ready.pids![0]!;
    let failed = 0;
    let answered = 0;
    let looping = true;
    const loop = (async () => {
      while (looping) {
        const res = await get(port, '/healthz');
        if ('status' in res && res.status === 200) answered++;
        else failed++;
      }
    })();
    process.kill(victim, 'SIGKILL');
    const exited = await until('the death to be logged', () => logs(set).find((l) => l.msg === 'server process exited: restarting it' && l.pid === victim));
    t.match(exited, { process: 1, signal: 'SIGKILL', code: null }, 'logged with its slot and signal');
    const replaced = await until('a new process 1', () => logs(set).find((l) => l.msg === 'server process listening' && l.process === 1 && l.pid !== victim), 60_000);
    seen.add(replaced.pid!);
    const answeredBefore = answered;
    await until('more answers after the replacement', () => (answered > answeredBefore + 20 ? true : undefined));
    looping = false;
    await loop;
    t.comment(`requests while process 1 was replaced: ${answered} answered, ${failed} failed`);
    t.ok(answered > 20, 'the port kept answering');
    const text = await metrics(port);
    for (const slot of [1, 2]) t.match(text, new RegExp(`^process_start_time_seconds\\{process="${slot}"\\}`, 'm'), `process ${slot} is in /metrics again`);
    t.match(text, READYZ_40, 'the counts of the process that died stay in the sums');
  });

  await t.test('SIGTERM stops the servers, then the worker, and exits 0', async (t) => {
    set.child.kill('SIGTERM');
    const { code } = await set.exited;
    t.equal(code, 0, 'exit 0');
    const lines = logs(set);
    const at = (find: (l: LogLine) => boolean, what: string) => {
      const index = lines.findIndex(find);
      t.not(index, -1, `logged: ${what}`);
      return index;
    };
    const stopping = at((l) => l.msg === 'stopping the server processes', 'stopping the server processes');
    const serversStopped = [1, 2].map((slot) => at((l) => l.msg === 'server process stopped' && l.process === slot && l.code === 0, `server process ${slot} stopped (code 0)`));
    const childStopped = [1, 2].map((slot) => at((l) => l.msg === 'stopped' && l.process === slot, `process ${slot}'s own "stopped"`));
    const worker = at((l) => l.msg === 'stopping the worker process', 'stopping the worker process');
    const workerStopped = at((l) => l.msg === 'worker process stopped' && l.code === 0, 'worker process stopped (code 0)');
    const all = at((l) => l.msg === 'every process stopped', 'every process stopped');
    for (const index of [...serversStopped, ...childStopped]) t.ok(stopping < index && index < worker, 'the servers stop before the worker is asked to');
    t.ok(worker < workerStopped, 'then the worker');
    // The supervisor's last lines may reach the pipe out of order (its logger flushes what it holds at exit): by their times.
    t.ok(lines[workerStopped]!.time <= lines[all]!.time, 'and only then is the supervisor done');
    for (const pid of seen) t.notOk(alive(pid), `process ${pid} is gone`);
  });
});

t.test('a second signal stops every process at once: exit 1, no process left', async (t) => {
  const config = testConfig(t);
  const port = await freePort();
  const env = {
    DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix,
    HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', SANDBOX: 'off',
    // The servers would wait a minute before closing: only the second signal ends it early.
    SHUTDOWN_DELAY: '60',
  };
  const set = start(process.execPath, [HRS, 'serve', '--processes', '2', '--no-workers'], env);
  let pids: number[] = [];
  t.teardown(async () => {
    for (const pid of [set.child.pid!, ...pids]) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  const ready = await until('the set to listen', () => logs(set).find((l) => l.msg === 'listening' && l.pids), 60_000);
  pids = ready.pids!;
  t.equal(ready.worker_pid, undefined, '--no-workers: no worker process');
  set.child.kill('SIGTERM');
  await until('both servers to begin their shutdown', () => (logs(set).filter((l) => l.msg === 'shutting down').length === 2 ? true : undefined));
  set.child.kill('SIGTERM');
  const { code } = await set.exited;
  t.equal(code, 1, 'exit 1, as hrs serve exits on a second signal');
  for (const pid of pids) await until(`server process ${pid} to be gone`, () => (alive(pid) ? undefined : true), 5000);
  t.same(pids.filter(alive), [], `no server process is left (${pids.join(', ')})`);
});

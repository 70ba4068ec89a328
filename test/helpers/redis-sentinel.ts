import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '@redis/client';

/**
 * A Redis master, one replica of it and three Sentinels watching them (Debian's redis-server and
 * redis-sentinel from the PATH), as a test's own servers: free ports, configuration and data in a fresh
 * temporary folder, all killed and removed by `stop()`. The Sentinels agree with a quorum of 2 and call
 * a master down after a second without an answer, so a killed master is replaced in a few seconds.
 */
export interface RedisSentinelSet {
  /** '127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3' (REDIS_SENTINELS) */
  sentinels: string;
  /** The master group's name (REDIS_SENTINEL_NAME) */
  name: string;
  /** The master's port as the Sentinels say now. */
  masterPort(): Promise<number>;
  /** SIGKILL of the current master: an abrupt machine loss. */
  killMaster(): Promise<void>;
  /** Resolves with the new master's port once the Sentinels name another one and it accepts writes. */
  waitForFailover(oldPort: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/** Why the set cannot run here (a test's `skip`), or undefined: Debian's redis-server and redis-sentinel. */
export function redisSentinelMissing(): string | undefined {
  for (const binary of ['/usr/bin/redis-server', '/usr/bin/redis-sentinel']) {
    try {
      accessSync(binary, constants.X_OK);
    } catch {
      return `${binary} is not installed (Debian package ${binary.split('/').pop()}; CI installs it in .ci/run)`;
    }
  }
  return undefined;
}

const NAME = 'hrs-test';
const HOST = '127.0.0.1';
const QUORUM = 2;
const DOWN_AFTER_MS = 1000;
const FAILOVER_TIMEOUT_MS = 5000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One command to a server, on a connection of its own that does not retry. */
async function ask(port: number, args: string[]): Promise<unknown> {
  const client = createClient({ socket: { host: HOST, port, connectTimeout: 1000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.sendCommand(args);
  } finally {
    client.destroy();
  }
}

async function until<T>(what: string, timeoutMs: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await sleep(100);
  }
  throw new Error(`${what} not within ${timeoutMs} ms${last ? ` (${(last as Error).message})` : ''}`);
}

export async function startRedisSentinelSet(): Promise<RedisSentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), 'hrs-sentinel-'));
  const processes = new Map<number, ChildProcess>();
  const start = (port: number, binary: string, config: string[]) => {
    const file = join(dir, `${port}.conf`);
    writeFileSync(file, [...config, ''].join('\n'));
    const child = spawn(binary, [file], { stdio: 'ignore' });
    child.on('error', () => {});
    processes.set(port, child);
  };
  const stop = async () => {
    await Promise.all(
      [...processes.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    processes.clear();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [master, replica, ...sentinelPorts] = (await Promise.all([1, 2, 3, 4, 5].map(() => freePort()))) as [number, number, ...number[]];
    const server = (port: number) => [
      `port ${port}`,
      `bind ${HOST}`,
      `dir ${dir}`,
      `dbfilename ${port}.rdb`,
      'save ""',
      'appendonly no',
      'repl-diskless-sync yes',
      'repl-diskless-sync-delay 0',
    ];
    start(master, 'redis-server', server(master));
    start(replica, 'redis-server', [...server(replica), `replicaof ${HOST} ${master}`]);
    await until('the replica in sync', 10_000, async () => {
      const info = String(await ask(replica, ['INFO', 'replication']));
      return /master_link_status:up/.test(info) ? true : undefined;
    });
    for (const port of sentinelPorts) {
      start(port, 'redis-sentinel', [
        `port ${port}`,
        `bind ${HOST}`,
        `dir ${dir}`,
        `sentinel monitor ${NAME} ${HOST} ${master} ${QUORUM}`,
        `sentinel down-after-milliseconds ${NAME} ${DOWN_AFTER_MS}`,
        `sentinel failover-timeout ${NAME} ${FAILOVER_TIMEOUT_MS}`,
        `sentinel parallel-syncs ${NAME} 1`,
      ]);
    }
    // A failover needs the Sentinels to know each other (they meet through the master) and the replica.
    await until('the Sentinels to know each other and the replica', 20_000, async () => {
      for (const port of sentinelPorts) {
        const replicas = (await ask(port, ['SENTINEL', 'REPLICAS', NAME])) as unknown[];
        const others = (await ask(port, ['SENTINEL', 'SENTINELS', NAME])) as unknown[];
        if (replicas.length < 1 || others.length < sentinelPorts.length - 1) return undefined;
        await ask(port, ['SENTINEL', 'CKQUORUM', NAME]);
      }
      return true;
    });

    const masterPort = async (): Promise<number> => {
      let last: unknown;
      for (const port of sentinelPorts) {
        try {
          const address = (await ask(port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME])) as string[] | null;
          if (address) return Number(address[1]);
        } catch (err) {
          last = err;
        }
      }
      throw new Error(`no Sentinel names a master (${(last as Error | undefined)?.message ?? 'none answered'})`);
    };
    return {
      sentinels: sentinelPorts.map((port) => `${HOST}:${port}`).join(','),
      name: NAME,
      masterPort,
      async killMaster() {
        const child = processes.get(await masterPort());
        if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error('the master is not running');
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        });
      },
      waitForFailover: (oldPort, timeoutMs = 30_000) =>
        until('a failover', timeoutMs, async () => {
          const port = await masterPort();
          if (port === oldPort) return undefined;
          const info = String(await ask(port, ['INFO', 'replication']));
          return /role:master/.test(info) ? port : undefined;
        }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

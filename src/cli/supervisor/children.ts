import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../config/log.js';
import { NODE_FLAGS } from '../../config/node-flags.js';
import { combinedText, countsOf, GATHER_TIMEOUT_MS, mergedCounts, type MetricsJson } from './metrics.js';
import { isMessage, PROCESS_SLOT, type Message } from './messages.js';

/**
 * The processes `hrs serve --processes N` supervises: N server processes (`hrs serve` without
 * workers, sharing HOST:PORT) and, unless --no-workers, one `hrs worker`. Each is restarted when it
 * dies, after a pause that doubles with every death in a row (capped), counted afresh once a process
 * has run a while. They run in process groups of their own, so a terminal's Ctrl-C reaches only the
 * supervisor, which stops them in order: the servers (each finishing its requests), then the worker.
 */

/** The first pause before a restart, doubled for every further death in a row up to the cap. */
const RESTART_FIRST_MS = 250;
const RESTART_CAP_MS = 30_000;
/** A process that ran this long before dying starts the count of deaths in a row afresh. */
const STEADY_MS = 60_000;

type Kind = 'server' | 'worker';

interface Slot {
  kind: Kind;
  /** 1 to N for the servers (the `process` label of metrics), 0 for the worker. */
  slot: number;
  child: ChildProcess | undefined;
  ready: boolean;
  startedAt: number;
  deathsInARow: number;
  restart: NodeJS.Timeout | undefined;
  exited: Promise<void>;
}

/** `bin/hrs.js`, which runs the build or the sources as this process does, found above this module (src/ or dist/src/). */
function hrsScript(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const script = join(dir, 'bin', 'hrs.js');
    if (existsSync(script)) return script;
  }
  throw new Error('bin/hrs.js not found above the running module');
}

export interface ProcessSetOptions {
  servers: number;
  worker: boolean;
  /** The children's environment: the parent's, with DATABASE_URL, REDIS_URL and PORT settled. */
  env: Record<string, string | undefined>;
  log: Logger;
}

export class ProcessSet {
  private readonly slots: Slot[] = [];
  private readonly script = hrsScript();
  private stopping = false;
  private starting: { resolve: () => void; reject: (err: Error) => void } | undefined;
  private gathering = 0;
  private readonly gathers = new Map<number, { bySlot: Map<number, MetricsJson>; expected: number; done: () => void }>();
  /** Each server's metrics as last collected, and the counts of those that died since (kept in the sums). */
  private readonly lastSeen = new Map<number, MetricsJson>();
  private retired: MetricsJson[] = [];

  constructor(private readonly options: ProcessSetOptions) {
    for (let slot = 1; slot <= options.servers; slot++) this.slots.push(this.slot('server', slot));
    if (options.worker) this.slots.push(this.slot('worker', 0));
    // However this process ends (a second signal exits at once), no child outlives it.
    process.on('exit', () => {
      for (const { child } of this.slots) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
  }

  /** Starts every process; resolves once every server listens, rejects when one exits before. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.starting = { resolve, reject };
      for (const slot of this.slots) this.spawn(slot);
    });
  }

  /** The pids running now, by kind. */
  pids(): { servers: number[]; worker: number | undefined } {
    const pid = (s: Slot) => s.child?.pid ?? 0;
    return { servers: this.slots.filter((s) => s.kind === 'server').map(pid), worker: this.slots.find((s) => s.kind === 'worker')?.child?.pid };
  }

  /** Stops the servers (SIGTERM: each finishes its requests in flight as `hrs serve` does), then the worker. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const slot of this.slots) clearTimeout(slot.restart);
    const { log } = this.options;
    for (const kind of ['server', 'worker'] as const) {
      const slots = this.slots.filter((s) => s.kind === kind && s.child && s.child.exitCode === null && s.child.signalCode === null);
      if (slots.length === 0) continue;
      log.info({ pids: slots.map((s) => s.child?.pid) }, kind === 'server' ? 'stopping the server processes' : 'stopping the worker process');
      for (const slot of slots) slot.child?.kill('SIGTERM');
      await Promise.all(slots.map((s) => s.exited));
    }
  }

  private slot(kind: Kind, slot: number): Slot {
    return { kind, slot, child: undefined, ready: false, startedAt: 0, deathsInARow: 0, restart: undefined, exited: Promise.resolve() };
  }

  private spawn(slot: Slot): void {
    const { env, log } = this.options;
    const args = slot.kind === 'server' ? ['serve'] : ['worker'];
    const child = fork(this.script, args, {
      env: { ...env, ...(slot.kind === 'server' ? { [PROCESS_SLOT]: String(slot.slot) } : {}) },
      execArgv: [...new Set([...process.execArgv, ...NODE_FLAGS])],
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    slot.child = child;
    slot.ready = false;
    slot.startedAt = Date.now();
    slot.exited = new Promise((resolve) => child.once('exit', (code, signal) => {
      this.exited(slot, child, code, signal);
      resolve();
    }));
    child.on('message', (message: unknown) => {
      if (isMessage(message)) this.heard(slot, child, message);
    });
    if (slot.kind === 'worker') log.info({ pid: child.pid }, 'worker process started (hrs worker)');
  }

  private heard(slot: Slot, child: ChildProcess, message: Message): void {
    if (message.hrs === 'ready') {
      slot.ready = true;
      this.options.log.info({ process: slot.slot, pid: child.pid }, 'server process listening');
      if (this.starting && this.slots.every((s) => s.kind !== 'server' || s.ready)) {
        this.starting.resolve();
        this.starting = undefined;
      }
    } else if (message.hrs === 'metrics:gather') {
      void this.gather().then(
        (text) => child.connected && child.send({ hrs: 'metrics:gathered', id: message.id, text } satisfies Message),
        (err: Error) => child.connected && child.send({ hrs: 'metrics:gathered', id: message.id, error: err.message } satisfies Message),
      );
    } else if (message.hrs === 'metrics:collected') {
      const gather = this.gathers.get(message.id);
      if (!gather) return;
      gather.bySlot.set(slot.slot, message.metrics);
      if (gather.bySlot.size === gather.expected) gather.done();
    }
  }

  /** Every listening server's metrics (those that answer in time), added up. */
  private async gather(): Promise<string> {
    const id = ++this.gathering;
    const servers = this.slots.filter((s) => s.kind === 'server' && s.ready && s.child?.connected);
    const bySlot = new Map<number, MetricsJson>();
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.gathers.set(id, { bySlot, expected: servers.length, done: resolve });
      timer = setTimeout(resolve, GATHER_TIMEOUT_MS / 2);
      for (const s of servers) s.child?.send({ hrs: 'metrics:collect', id } satisfies Message);
    });
    clearTimeout(timer);
    this.gathers.delete(id);
    for (const [slot, metrics] of bySlot) this.lastSeen.set(slot, metrics);
    if (this.retired.length > 1) this.retired = [await mergedCounts(this.retired)];
    return combinedText(bySlot, this.retired);
  }

  private exited(slot: Slot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    const { log } = this.options;
    const name = slot.kind === 'server' ? 'server process' : 'worker process';
    const fields = { ...(slot.kind === 'server' ? { process: slot.slot } : {}), pid: child.pid, code, signal };
    slot.ready = false;
    if (this.stopping) {
      log.info(fields, `${name} stopped`);
      return;
    }
    if (this.starting && slot.kind === 'server') {
      log.error(fields, `${name} exited while starting`);
      this.starting.reject(new Error(`server process ${slot.slot} exited while starting (${signal ?? `code ${code}`})`));
      this.starting = undefined;
      return;
    }
    const last = this.lastSeen.get(slot.slot);
    this.lastSeen.delete(slot.slot);
    if (last && slot.kind === 'server') this.retired.push(countsOf(last));
    if (Date.now() - slot.startedAt >= STEADY_MS) slot.deathsInARow = 0;
    const pause = Math.min(RESTART_FIRST_MS * 2 ** slot.deathsInARow, RESTART_CAP_MS);
    slot.deathsInARow++;
    log.error({ ...fields, restart_in_ms: pause }, `${name} exited: restarting it`);
    slot.restart = setTimeout(() => this.spawn(slot), pause);
  }
}

import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import type { Config } from './config/config.js';
import type { Announcements } from './infra/announce.js';
import { installSandbox, removeSandbox } from './registry/sandbox.js';
import { recheckStoredPhotos } from './registry/stored-photos.js';

/*
 * What the composition root (src/platform.ts) does once at start, before anything is served, beside
 * building the parts: the sandbox's stations as SANDBOX says, and the stored photos not yet checked.
 */

/**
 * The export v1.1 sandbox's stations as SANDBOX says: written (or removed), announced to the other
 * instances when they changed (the simulator's schedule is set in `wire`). A failure is logged, never
 * fatal: the sandbox is a convenience, the service runs without it.
 */
export async function setUpSandbox(config: Readonly<Config>, sql: Sql, announcements: Announcements, log: Logger): Promise<void> {
  try {
    const change = config.sandbox ? await installSandbox(sql) : await removeSandbox(sql);
    if (change.changedStations.length > 0) {
      log.info({ stations: change.changedStations, sandbox: config.sandbox }, config.sandbox ? 'sandbox stations written' : 'sandbox removed');
      await announcements.stationsChanged(change.changedStations).catch((err: unknown) => log.warn({ err }, 'sandbox change not announced'));
    }
  } catch (err) {
    log.error({ err }, 'setting up the export v1.1 sandbox failed');
  }
}

/** Stored photos not yet decoded and re-encoded are, before anything is served; a failure is logged, never fatal. */
export async function recheckPhotos(sql: Sql, announcements: Announcements, log: Logger): Promise<void> {
  try {
    const changed = await recheckStoredPhotos(sql, log);
    if (changed.length === 0) return;
    await announcements.stationsChanged(changed).catch((err: unknown) => log.warn({ err }, 'photo changes not announced'));
  } catch (err) {
    log.error({ err }, 'checking the stored photos failed: those not checked are not served until the next start');
  }
}

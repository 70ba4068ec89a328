import type { Logger } from 'pino';
import { HttpError } from '../http/errors.js';
import type { Connections, Socket } from './connections.js';
import { errorMessage } from './protocol.js';

/**
 * Open status streams keep the token they were opened with: it is checked again every minute (expiry)
 * and whenever tokens change (revocations, at once), and a stream whose token no longer authenticates
 * (revoked, expired, owner deactivated) is told why and closed with 4401.
 */

/** How often open streams' tokens are checked again (expiry; revocations are checked at once). */
const RECHECK_EVERY_MS = 60_000;

export interface TokenRecheckDeps {
  connections: Connections;
  /** Resolves when a `Bearer …` credential still authenticates on export v2; throws its HttpError otherwise. */
  recheck: (credential: string) => Promise<void>;
  log: Logger;
}

export class TokenRecheck {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: TokenRecheckDeps) {}

  /** Checks every RECHECK_EVERY_MS from now on. */
  start(): void {
    this.timer ??= setInterval(() => void this.now(), RECHECK_EVERY_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Closes the streams whose token no longer authenticates; each credential is checked once. */
  async now(): Promise<void> {
    const { connections, recheck, log } = this.deps;
    const byCredential = new Map<string, Socket[]>();
    for (const [ws, connection] of connections.all) {
      const state = ws.getUserData().state;
      if (connection.closed || state?.kind !== 'stream') continue;
      byCredential.set(state.credential, [...(byCredential.get(state.credential) ?? []), ws]);
    }
    for (const [credential, sockets] of byCredential) {
      try {
        await recheck(credential);
      } catch (err) {
        if (!(err instanceof HttpError)) {
          log.warn({ err }, 'checking an open stream\'s token failed');
          continue;
        }
        for (const ws of sockets) {
          const connection = connections.all.get(ws);
          if (!connection || connection.closed) continue;
          connections.send(ws, errorMessage('authentication_failed', err.detail));
          connections.end(ws, connection, 'unauthorized');
        }
      }
    }
  }
}

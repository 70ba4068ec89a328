import { createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { isIpLiteral, refusalOf } from '../../src/domain/webhooks/addresses.js';
import { guardedLookup, RefusedAddressError, type Resolver } from '../../src/infra/name-resolver.js';
import { VERSION } from '../../src/config/version.js';

/**
 * One attempt to deliver a webhook message: signed per Standard Webhooks with every secret that signs
 * now (the new one first during a rotation's overlap), POSTed once with a deadline over a connection
 * whose every address is checked against the forgery rules (guardedLookup for names, resolved by the
 * bounded resolver it is given; refusalOf for IP literals, which are never looked up). Redirects are not followed: a 3xx is a failed attempt.
 *
 * Connections to a receiver are kept alive and reused (one pool per worker process): a receiver busy
 * with many subscriptions' messages is not dialled (and TLS-shaken) once per message. Only the
 * connection is reused, never a check: an address was checked when its connection was made, and a
 * connection stays with that address. A reused connection the receiver had closed meanwhile (its idle
 * timeout crossing our send) fails before any answer: that message is sent again at once on a new
 * connection, which is what a receiver that applies each webhook-id once expects of a retry anyway.
 */

/**
 * Idle connections kept per receiver, and how long one may idle (under the 5 s many servers close
 * after). As many as a worker has turns at once (./processor.ts CONCURRENCY): with fewer, a receiver
 * of many subscriptions saw the connections beyond them closed as turns ended together and dialled
 * again for the next (a tenth of the worker's CPU at 100 subscriptions × 200 signals/s).
 */
const KEEP_ALIVE = { keepAlive: true, maxFreeSockets: 64, timeout: 4_000 } as const;
const agents = { http: new HttpAgent(KEEP_ALIVE), https: new HttpsAgent(KEEP_ALIVE) };

/** What an attempt came to: an HTTP status, or why none was had. */
export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  latencyMs: number | null;
}

const SECRET_PREFIX = 'whsec_';

/** A secret's signing key: the bytes its base64 (after `whsec_`) names, as the Standard Webhooks libraries read it. */
export function signingKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new Error('the signing secret is empty');
  return key;
}

/**
 * The `webhook-signature` value: one `v1,<base64>` per key, separated by spaces, each the HMAC-SHA256
 * of `<id>.<unix seconds>.<body>` (Standard Webhooks). Node's own HMAC: the standardwebhooks package
 * hashes in JavaScript, a tenth of the worker's CPU per message (receivers verify with it, and the
 * tests check the two agree).
 */
export function signatures(keys: readonly Buffer[], messageId: string, at: Date, body: string | Buffer): string {
  const signed = `${messageId}.${Math.floor(at.getTime() / 1000)}.`;
  let header = '';
  for (const key of keys) header += `${header === '' ? '' : ' '}v1,${createHmac('sha256', key).update(signed).update(body).digest('base64')}`;
  return header;
}

/** An attempt's headers: its body's type and length, the User-Agent, and the Standard Webhooks three, signed at `at`. */
export function deliveryHeaders(keys: readonly Buffer[], messageId: string, at: Date, payload: Buffer): Record<string, string> {
  return {
    'content-type': 'application/json',
    'content-length': String(payload.length),
    'user-agent': USER_AGENT,
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures(keys, messageId, at, payload),
  };
}

/** The User-Agent every delivery carries. */
export const USER_AGENT = `hrs-signal-platform-webhooks/${VERSION}`;

/** At most this much of an answer is read (and dropped): receivers are told to answer quickly and briefly. */
const ANSWER_BYTES = 64 * 1024;

export interface SendOptions {
  timeoutMs: number;
  allowLoopback: boolean;
  /** How the receiver's host name is resolved (src/infra/name-resolver.ts: bounded, off libuv's threads). */
  resolver: Resolver;
}

/** POSTs a message; never throws (a failure is an outcome with its reason). */
export async function sendMessage(url: string, messageId: string, body: string, keys: readonly Buffer[], options: SendOptions): Promise<AttemptOutcome> {
  const first = await post(url, messageId, body, keys, options, true);
  return first.staleConnection ? post(url, messageId, body, keys, options, false) : first;
}

/** What an attempt needs of its URL: where to connect, or why it may not. */
type Target = { refused: string } | { refused?: undefined; https: boolean; options: ReturnType<typeof urlToHttpOptions> };

/**
 * Each URL's target, made once and kept (per loopback rule): parsing the URL and checking an IP
 * literal's address every attempt was a fiftieth of the worker's CPU, and neither can change (the
 * rules are pure; a name's addresses are checked per connection, in its lookup). At most
 * TARGETS_KEPT are kept; past that the map starts again.
 */
const targets = [new Map<string, Target>(), new Map<string, Target>()] as const;
const TARGETS_KEPT = 10_000;

function targetOf(url: string, allowLoopback: boolean): Target {
  const kept = targets[allowLoopback ? 1 : 0];
  let target = kept.get(url);
  if (target === undefined) {
    target = newTarget(url, allowLoopback);
    if (kept.size >= TARGETS_KEPT) kept.clear();
    kept.set(url, target);
  }
  return target;
}

function newTarget(url: string, allowLoopback: boolean): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refused: 'refused: the URL is not valid' };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return { refused: `refused: ${parsed.protocol} is not HTTP` };
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIpLiteral(host)) {
    const refused = refusalOf(host, allowLoopback);
    if (refused) return { refused: `refused: ${refused}` };
  }
  return { https: parsed.protocol === 'https:', options: urlToHttpOptions(parsed) };
}

/** One guarded lookup per resolver and loopback rule, not one per attempt. */
const lookups = new WeakMap<Resolver, [ReturnType<typeof guardedLookup>, ReturnType<typeof guardedLookup>]>();

function lookupOf(allowLoopback: boolean, resolver: Resolver): ReturnType<typeof guardedLookup> {
  let pair = lookups.get(resolver);
  if (pair === undefined) {
    pair = [guardedLookup(false, resolver), guardedLookup(true, resolver)];
    lookups.set(resolver, pair);
  }
  return pair[allowLoopback ? 1 : 0];
}

/** One POST, over a kept connection when `reuse` (else a new one); `staleConnection`: a kept one that was already closed. */
async function post(url: string, messageId: string, body: string, keys: readonly Buffer[], options: SendOptions, reuse: boolean): Promise<AttemptOutcome & { staleConnection?: boolean }> {
  const target = targetOf(url, options.allowLoopback);
  if (target.refused !== undefined) return { statusCode: null, error: target.refused, latencyMs: null };
  const payload = Buffer.from(body, 'utf8');
  const headers = deliveryHeaders(keys, messageId, new Date(), payload);
  const started = performance.now();
  const https = target.https;
  const request = https ? httpsRequest : httpRequest;
  const agent = reuse ? (https ? agents.https : agents.http) : false;
  return new Promise<AttemptOutcome & { staleConnection?: boolean }>((resolve) => {
    let settled = false;
    let answered = false;
    const finish = (outcome: Omit<AttemptOutcome, 'latencyMs'> & { staleConnection?: boolean }, connected: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, latencyMs: connected ? Math.round(performance.now() - started) : null });
    };
    const req = request({ ...target.options, method: 'POST', headers, lookup: lookupOf(options.allowLoopback, options.resolver) as never, agent }, (res: IncomingMessage) => {
      answered = true;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > ANSWER_BYTES) res.destroy();
      });
      const done = () => finish({ statusCode: res.statusCode ?? null, error: (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300 ? null : `answered ${res.statusCode}` }, true);
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    let connected = false;
    // A kept connection is connected already; a new one once it connects.
    req.on('socket', (socket) => (socket.connecting ? socket.on('connect', () => (connected = true)) : (connected = true)));
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${options.timeoutMs} ms` }, connected);
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof RefusedAddressError || err.code === 'EWEBHOOKADDRESS') return finish({ statusCode: null, error: `refused: ${err.message}` }, false);
      if (req.reusedSocket && !answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        return finish({ statusCode: null, error: `${err.code}: ${err.message}`, staleConnection: true }, connected);
      }
      finish({ statusCode: null, error: err.code ? `${err.code}: ${err.message}` : err.message }, connected);
    });
    req.end(payload);
  });
}

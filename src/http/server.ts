import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AuthAttempts } from './auth.js';
import { answerBodies } from './body-pool.js';
import type { TrustProxy } from './client-address.js';
import { watchDeadline } from './deadline.js';
import { checkInput, defaultInvalid, type AnyRoute, type RouteInfo, type RouteSpec } from './contract.js';
import { HttpError, notFound, type Reply } from './errors.js';
import type { Family, FamilyState, Guard, Observer } from './family.js';
import { compilePolicy, isPreflight, preflightReply } from './policy.js';
import { checkQuery, queryNames, type QuerySchema } from './query.js';
import { Abort, copyRequest, readBody, tooLarge, type Request } from './request.js';
import { failure, respond, withRequestHeaders, type ErrorClassifier } from './respond.js';
import { Router, type Match, type Method } from './router.js';
import { socketBehavior, upgradeHandler, type SocketRouteSpec, type SocketData } from './sockets.js';

export type { FamilyState, RouteInfo, RouteSpec, SocketData, SocketRouteSpec };

if (typeof uWS.getParts !== 'function') {
  throw new Error(
    'uWebSockets.js fell back to its slow JavaScript shim: this Node.js version has no native build. Use Node.js 20.',
  );
}

/** uWS's listen options: the default shares the port with other listeners (SO_REUSEPORT); exclusive does not. */
const LISTEN_SHARED = 0;
const LISTEN_EXCLUSIVE: number = (() => {
  const value = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: number }).LIBUS_LISTEN_EXCLUSIVE_PORT;
  if (typeof value !== 'number') throw new Error('this uWebSockets.js build has no LIBUS_LISTEN_EXCLUSIVE_PORT: a busy port could not be refused');
  return value;
})();

/** One answered request, as metrics see it (every response: routes, refusals, unknown paths, upgrades). */
export interface Answered {
  req: Request;
  status: number;
  family: Family;
  /** The route's path pattern, or undefined when no route took the request. */
  route: string | undefined;
  /** Seconds from receipt to the answer written. */
  seconds: number;
}

/** One request's synchronous stretch: its input checks and its handler up to the handler's first await. */
export interface BlockingSection {
  method: string;
  /** The route's path pattern. */
  route: string;
  ms: number;
}

export interface HttpServerOptions {
  log: Logger;
  maxBodyBytes: number;
  /** Answers for paths no family's prefix claims (health, unknown paths at the root). */
  fallback: Family;
  /** Maps a known failure of a dependency (PostgreSQL unreachable, say) to the HttpError to answer with. */
  classify?: ErrorClassifier;
  /** Told of every answered request, after the answer is written; must not throw. */
  onAnswered?: (answered: Answered) => void;
  /** The proxies whose forwarded addresses name the client (TRUST_PROXY; see ./client-address.ts); none when undefined. */
  trustProxy?: TrustProxy;
  /** The longest a WebSocket stays open, in seconds (PUSH_MAX_AGE; see socketBehavior in ./sockets.ts); no limit when undefined. */
  socketMaxAgeSeconds?: number;
}

const BODY_METHODS = new Set<Method>(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A body declared longer than its cap by more than this is answered 413 and its connection closed at
 * once; up to this much past the cap, the rest is read and discarded after the answer so that a
 * client still sending reads it (a lingering close, see CloseConnection in ./errors.ts).
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The uWS application and the single wrapper every route goes through: abort-safe, request copied
 * before the first await, body capped while read, status, headers and body written in one cork.
 * Families, their authentication, guards, observers, error styles and policies are values handed to
 * it with the routes (./family.ts); it knows none by name.
 */
export class HttpServer {
  readonly app: TemplatedApp = uWS.App();
  private readonly router = new Router<AnyRoute>();
  private readonly families = new Map<Family, FamilyState>();
  /** Registered families, longest prefix first: the first whose prefix a path has claims it. */
  private byPrefix: FamilyState[] = [];
  private readonly fallback: FamilyState;
  private listenSocket: us_listen_socket | undefined;
  private boundPort: number | undefined;
  private inFlight = 0;
  private readonly specs: AnyRoute[] = [];
  private idle: (() => void)[] = [];
  private attempts: AuthAttempts | undefined;
  private longest: BlockingSection | undefined;

  constructor(private readonly options: HttpServerOptions) {
    this.fallback = this.family(options.fallback);
    this.app.any('/*', (res, req) => this.dispatch(res, req));
  }

  /** Every registered route, in registration order: for documents. */
  routes(): RouteInfo[] {
    return this.specs.map((spec) => {
      const query = queryNames(spec.query);
      return {
        method: spec.method,
        path: spec.path,
        auth: spec.public ? 'none' : spec.family.name,
        ...(query.length ? { query, querySchema: spec.query } : {}),
        ...(spec.params ? { params: spec.params } : {}),
        ...(spec.doc ? { doc: spec.doc } : {}),
        ...(spec.response ? { response: spec.response } : {}),
      };
    });
  }

  /** Every registered route with its contract (schemas of path, query and body), in registration order: for checks over all of them. */
  contracts(): readonly AnyRoute[] {
    return this.specs;
  }

  /** The longest synchronous stretch of one request since the last call (what ran when the event loop stalled). */
  takeLongestSection(): BlockingSection | undefined {
    const longest = this.longest;
    this.longest = undefined;
    return longest;
  }

  /** The port listened on, once listening. */
  get port(): number | undefined {
    return this.boundPort;
  }

  /** Registers a family (done by `route` and `socket` too): its prefix then claims the paths no route does. */
  family(family: Family): FamilyState {
    let state = this.families.get(family);
    if (state) return state;
    const policy = family.policy ? compilePolicy(family.policy) : undefined;
    state = { family, policy, errors: family.errors, guards: [...(family.guards ?? [])], observers: [...(family.observers ?? [])] };
    this.families.set(family, state);
    this.byPrefix = [...this.families.values()].sort((a, b) => b.family.prefix.length - a.family.prefix.length);
    return state;
  }

  /** Every registered family, in registration order: for documents. */
  registeredFamilies(): Family[] {
    return [...this.families.keys()];
  }

  route<P extends z.ZodType = z.ZodType<Record<string, string>>, Q extends QuerySchema = QuerySchema, B extends z.ZodType = z.ZodType>(spec: RouteSpec<P, Q, B>): this {
    if (!spec.public && !spec.family.auth) throw new Error(`route ${spec.method} ${spec.path}: family ${spec.family.name} has no authentication`);
    this.family(spec.family);
    this.router.add(spec.method, spec.path, spec);
    this.specs.push(spec);
    return this;
  }

  /** Registers a WebSocket endpoint (see SocketRouteSpec in ./sockets.ts); a plain GET there is answered 426. */
  socket<T>(spec: SocketRouteSpec<T>): this {
    this.route({
      family: spec.family,
      method: 'GET',
      path: spec.path,
      public: spec.public,
      query: spec.query,
      doc: spec.doc,
      handler: () => {
        throw new HttpError(426, 'upgrade_required', 'This endpoint is a WebSocket: connect with "Upgrade: websocket".', {
          headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
        });
      },
    });
    const family = this.family(spec.family);
    this.app.ws<SocketData<T>>(spec.path, {
      ...socketBehavior(spec.behavior, this.options.socketMaxAgeSeconds),
      upgrade: upgradeHandler(spec, family, {
        log: this.options.log,
        trustProxy: this.options.trustProxy,
        authenticate: async (req, header) => (spec.public ? this.publicGuards(family, req) : this.authenticate(family, req, header)),
        classify: this.options.classify,
        answered: (req, status, started) => this.answered(req, status, family, started),
      }),
    });
    return this;
  }

  /**
   * Authenticates a socket's request after the fact (its first message carried the token): sets the
   * principal, runs the family's guards, then `admit`. Throws the HttpError a route would answer with.
   */
  async authenticateSocket<T>(spec: SocketRouteSpec<T>, req: Request, token: string): Promise<T> {
    await this.authenticate(this.family(spec.family), req, `Bearer ${token}`);
    return spec.admit(req);
  }

  /** Watches every authentication (all families, routes and sockets): see AuthAttempts in ./auth.ts. */
  watchAuthentication(attempts: AuthAttempts): this {
    this.attempts = attempts;
    return this;
  }

  /** Adds a guard to every authenticated route of a family, after those it declares. */
  guard(family: Family, guard: Guard): this {
    this.family(family).guards.push(guard);
    return this;
  }

  /** Adds an observer to every authenticated route of a family; it must not throw and should not block. */
  observe(family: Family, observer: Observer): this {
    this.family(family).observers.push(observer);
    return this;
  }

  /**
   * Listens on HOST:PORT, alone by default: a port another process listens on is refused ("address
   * in use") rather than shared, which the kernel would otherwise do silently, splitting connections
   * between the two. `reusePort` shares the port on purpose (several processes of one deployment).
   */
  listen(host: string, port: number, options: { reusePort?: boolean } = {}): Promise<number> {
    const mode = options.reusePort ? LISTEN_SHARED : LISTEN_EXCLUSIVE;
    return new Promise((resolve, reject) => {
      // The native app takes host, port, options and callback, though the type declarations omit it.
      const listen = this.app.listen as unknown as (host: string, port: number, mode: number, cb: (socket: us_listen_socket | false) => void) => void;
      listen.call(this.app, host, port, mode, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
          return;
        }
        this.listenSocket = socket;
        this.boundPort = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
        resolve(this.boundPort);
      });
    });
  }

  /** Stops accepting connections; open ones finish what they are doing. */
  stopListening(): void {
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }

  /** Closes every connection, idle keep-alive ones included (after `drained`, at shutdown). */
  closeConnections(): void {
    this.stopListening();
    // Present on the native app though this build's type declarations omit it.
    (this.app as unknown as { close?: () => void }).close?.();
  }

  /** Resolves once no request is being handled. */
  drained(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Tells `onAnswered` of an answer; a failing hook is logged, never the request's problem. */
  private answered(req: Request, status: number, family: FamilyState, started: number): void {
    const hook = this.options.onAnswered;
    if (!hook) return;
    try {
      hook({ req, status, family: family.family, route: req.route, seconds: (performance.now() - started) / 1000 });
    } catch (err) {
      req.log.error({ err }, 'answer hook failed');
    }
  }

  /** The family a path belongs to when no route claims it (an unknown path under /v2/ is still export v2's). */
  private familyOf(path: string): FamilyState {
    return this.byPrefix.find((state) => path.startsWith(state.family.prefix)) ?? this.fallback;
  }

  private dispatch(res: HttpResponse, uwsReq: HttpRequest): void {
    const abort = new Abort();
    res.onAborted(() => abort.fire());
    const req = copyRequest(uwsReq, res, abort, this.options.log, this.options.trustProxy);
    const started = performance.now();
    const match = req.method === ('UNKNOWN' as Method) ? undefined : this.router.match(req.method, req.path);
    if (match?.kind !== 'found' || req.method === 'OPTIONS') {
      const family = this.familyOf(req.path);
      const reply = withoutRoute(req, match, family);
      respond(this.options.log, res, req, reply, family, started);
      this.answered(req, reply.status, family, started);
      return;
    }
    req.params = match.params;
    req.route = match.route.path;
    this.run(match.route, req, res, started);
  }

  /**
   * Runs a route: body, authentication, guards, handler; answers once, whatever happens first. A
   * request whose steps all answer at once (a public route, say) is answered before this returns; the
   * others wait only for what does not (a rate limit's count in Redis, a token not cached, the body).
   */
  private run(route: AnyRoute, req: Request, res: HttpResponse, started: number): void {
    const family = this.family(route.family);
    const observers = route.public ? NO_OBSERVERS : family.observers;
    let done = false;
    const finish = (reply: Reply) => {
      if (done) return;
      done = true;
      if (req.abort.aborted) {
        req.log.info({ method: req.method, path: req.path, aborted: true }, 'request aborted by the client');
        answerBodies.give(reply.body);
        return;
      }
      const full = withRequestHeaders(reply, req);
      // Observers run once the connection is no longer the request's: the client address (which the
      // call log keeps) is read now for those that will want it.
      if (observers.length > 0 && observers.some((observe) => observe.wantsClientAddress?.(req, full))) void req.clientAddress;
      respond(this.options.log, res, req, full, family, started);
      this.answered(req, full.status, family, started);
      for (const observe of observers) observeSafely(observe, req, full);
      // Written (uWS copies it); an observer may keep the reply, so only without one (./body-pool.ts).
      if (observers.length === 0) answerBodies.give(full.body);
    };
    const body = this.startBody(route, req, res, family, finish);
    if (body === false) return;
    this.inFlight++;
    const deadline = watchDeadline(family.family.deadline, req, body, () => done, (err) => finish(family.errors.reply(err)));
    const fail = (err: unknown) => {
      if (!done) finish(failure(err, family, req, this.options.classify));
    };
    // Answers (or refuses) once the steps are through, then lets go of the request, whatever the answer does.
    const end = (failed: boolean, outcome: unknown) => {
      try {
        if (failed) fail(outcome);
        else finish(outcome as Reply);
      } finally {
        deadline.clear();
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      }
    };
    let outcome: Reply | Promise<Reply>;
    try {
      outcome = this.handle(route, family, req, body);
    } catch (err) {
      end(true, err);
      return;
    }
    if (outcome instanceof Promise) outcome.then((reply) => end(false, reply), (err: unknown) => end(true, err));
    else end(false, outcome);
  }

  /**
   * Starts reading the body at once (uWS drops data that arrives before a reader is attached); a
   * declared or actual length past the cap is answered 413 at once. False: answered already.
   */
  private startBody(route: AnyRoute, req: Request, res: HttpResponse, family: FamilyState, finish: (reply: Reply) => void): Promise<Buffer> | undefined | false {
    if (!route.body || !BODY_METHODS.has(req.method)) return undefined;
    const max = route.maxBodyBytes ?? this.options.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (declared > max) {
      finish(family.errors.reply(tooLarge(max, declared - max > LINGER_MAX_BYTES ? 'at-once' : true)));
      return false;
    }
    const body = readBody(res, max, req.abort);
    body.catch((err) => {
      if (err instanceof HttpError) finish(family.errors.reply(err));
    });
    return body;
  }

  /**
   * Query, authentication and guards, body, then the handler: the reply at once when every step
   * answered at once, else a promise of it. Each step that answers at once is not awaited: an await is
   * a turn of the microtask queue and a promise per request.
   */
  private handle(route: AnyRoute, family: FamilyState, req: Request, body: Promise<Buffer> | undefined): Reply | Promise<Reply> {
    checkQuery(route.query, req);
    let waiting: void | Promise<void> = undefined;
    if (!route.public) waiting = this.authenticate(family, req, req.headers.authorization);
    else if (family.family.guardsOnPublicRoutes) waiting = this.guarded(family, req, 0);
    if (body) {
      const read = (bytes: Buffer) => {
        req.body = bytes;
      };
      waiting = waiting ? waiting.then(() => body).then(read) : body.then(read);
    }
    return waiting ? waiting.then(() => this.answer(route, family, req)) : this.answer(route, family, req);
  }

  /** The route's handler with its checked input, timed (see `takeLongestSection`). */
  private answer(route: AnyRoute, family: FamilyState, req: Request): Reply | Promise<Reply> {
    if (req.abort.aborted) throw new Error('request aborted');
    const started = performance.now();
    try {
      return route.handler(req, checkInput(route, req, family.family.invalid ?? defaultInvalid));
    } finally {
      const ms = performance.now() - started;
      if (this.longest === undefined || ms > this.longest.ms) this.longest = { method: req.method, route: route.path, ms };
    }
  }

  /** The family's authentication, then its guards in order: undefined when all of it answered at once. */
  private authenticate(family: FamilyState, req: Request, header: string | undefined): void | Promise<void> {
    const auth = family.family.auth;
    if (!auth) throw new Error(`family ${family.family.name} has no authentication`);
    let principal: ReturnType<typeof auth>;
    try {
      principal = auth(header, req);
    } catch (err) {
      return this.refuse(family, req, err);
    }
    if (principal instanceof Promise) {
      return principal.then(
        (found) => {
          req.principal = found;
          return this.guarded(family, req, 0);
        },
        (err: unknown) => this.refuse(family, req, err),
      );
    }
    req.principal = principal;
    return this.guarded(family, req, 0);
  }

  /** A credential refused: the failed-authentication throttle's 429 when it refuses the client, else the refusal itself. */
  private async refuse(family: FamilyState, req: Request, err: unknown): Promise<never> {
    // A valid credential never gets here: the throttle refuses failures only.
    throw (await this.attempts?.failed(req, err, family.errors)) ?? err;
  }

  /** A public route's or socket's request: the family's guards when it runs them there too (`guardsOnPublicRoutes`). */
  private publicGuards(family: FamilyState, req: Request): void | Promise<void> {
    if (family.family.guardsOnPublicRoutes) return this.guarded(family, req, 0);
  }

  /** The family's guards from the `from`th, in order, each after the one before has let the request through. */
  private guarded(family: FamilyState, req: Request, from: number): void | Promise<void> {
    const guards = family.guards;
    for (let i = from; i < guards.length; i++) {
      const guarded = guards[i]!(req);
      if (guarded) {
        return guarded.then(() => {
          if (req.abort.aborted) throw new Error('request aborted');
          return this.guarded(family, req, i + 1);
        });
      }
      if (req.abort.aborted) throw new Error('request aborted');
    }
  }
}

/** The observers of a public route: none. */
const NO_OBSERVERS: readonly Observer[] = [];

/** What a request no route takes gets: 501, a CORS preflight's answer, 404 with a hint, 405, or OPTIONS's 204. */
function withoutRoute(req: Request, match: Match<RouteSpec> | undefined, family: FamilyState): Reply {
  if (!match) return family.errors.reply(new HttpError(501, 'not_implemented', 'Unsupported HTTP method.'));
  if (req.method === 'OPTIONS' && family.policy?.preflight && isPreflight(req)) {
    // Answered for any path under the prefix: the request that follows then gets a readable error.
    return preflightReply(req, family.policy, match.kind === 'not-found' ? undefined : match.allow);
  }
  if (match.kind === 'not-found') {
    const hint = match.suggestion?.endsWith('/') ? 'The trailing slash is required' : 'This path takes no trailing slash';
    return family.errors.reply(notFound(match.suggestion ? `Not found. ${hint}: ${match.suggestion}` : 'Not found.'));
  }
  const allow = match.allow.join(', ');
  if (req.method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
  return family.errors.reply(new HttpError(405, 'method_not_allowed', `Method "${req.method}" not allowed.`, { headers: { Allow: allow } }));
}

function observeSafely(observe: Observer, req: Request, reply: Reply): void {
  try {
    observe(req, reply);
  } catch (err) {
    req.log.error({ err }, 'response observer failed');
  }
}


import uWS, {
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type WebSocketBehavior,
  type us_listen_socket,
} from 'uWebSockets.js';
import type { Logger } from 'pino';
import { API_FAMILIES, type ApiFamily, type Authenticator } from './auth.js';
import { HttpError, errorReply, notFound, statusText, styleForPath, type ErrorStyle, type Reply } from './errors.js';
import {
  compilePolicy,
  decorate,
  headerBlock,
  isPreflight,
  keepsPolicyHeaders,
  preflightReply,
  type CompiledPolicy,
  type FamilyPolicy,
} from './policy.js';
import { Abort, copyRequest, readBody, tooLarge, type Request } from './request.js';
import { Router, type Method } from './router.js';

if (typeof uWS.getParts !== 'function') {
  throw new Error(
    'uWebSockets.js fell back to its slow JavaScript shim: this Node.js version has no native build. Use Node.js 20.',
  );
}

/** Runs after authentication and before the body is used; may throw an HttpError or add headers. */
export type Guard = (req: Request) => Promise<void> | void;

/** Sees every answered request of a family once the response is written (call logs, metrics). */
export type Observer = (req: Request, reply: Reply) => void;

export interface RouteSpec {
  method: Method;
  path: string;
  /** Which credential the route takes: an API family's token, the admin token, or none. */
  auth: ApiFamily | 'admin' | 'none';
  /** Error body shape; by default the family's (import and admin: `drf`, the rest: `problem`). */
  style?: ErrorStyle;
  /** Whether the route reads a request body. */
  body?: boolean;
  handler: (req: Request) => Promise<Reply> | Reply;
}

interface Route extends RouteSpec {
  style: ErrorStyle;
}

/** What every WebSocket of a socket route carries: the upgrade request (principal set once authenticated) and the route's own data. */
export interface SocketData<T> {
  req: Request;
  /** The route's own per-connection state (from `admit`), undefined until authenticated. */
  state: T | undefined;
}

/**
 * A WebSocket endpoint. The upgrade request goes through the same pipeline as any route of its
 * family: a token in `Authorization` is authenticated and the family's guards run (so a connection
 * counts once against a rate limit), then `admit` (may refuse with an HttpError); any refusal is an
 * HTTP response in the family's error format with the family's headers, and nothing is upgraded. With
 * `messageAuth` a request without `Authorization` is upgraded unauthenticated, for clients that cannot
 * set headers (browsers), and the route authenticates its first message with `authenticate` below.
 * A plain GET without `Upgrade: websocket` is answered 426.
 */
export interface SocketRouteSpec<T> {
  path: string;
  auth: ApiFamily | 'admin';
  messageAuth: boolean;
  /** Runs once the principal is known, before upgrading (header) or after the auth message; its result is `state`. */
  admit: (req: Request) => Promise<T> | T;
  /** The uWS behaviour (limits, open, message, drain, close); `upgrade` is the server's. */
  behavior: Omit<WebSocketBehavior<SocketData<T>>, 'upgrade'>;
  /** Undoes `admit` for a connection that never opened (the client left during the upgrade). */
  release?: (state: T) => void;
}

export interface HttpServerOptions {
  log: Logger;
  maxBodyBytes: number;
  authenticator: Authenticator;
  /** Per-family response policies (the platform gives export v2 `EXPORT_V2_POLICY` of ./policy.ts); none by default. */
  policies?: Partial<Record<ApiFamily, FamilyPolicy>>;
}

const BODY_METHODS = new Set<Method>(['POST', 'PUT', 'PATCH', 'DELETE']);

function familyStyle(auth: RouteSpec['auth'], path: string): ErrorStyle {
  if (auth === 'admin') return 'drf';
  if (auth === 'none') return styleForPath(path);
  return API_FAMILIES[auth].label.startsWith('import') ? 'drf' : 'problem';
}

/**
 * The uWS application and the single wrapper every route goes through: abort-safe, request copied
 * before the first await, body capped while read, status, headers and body written in one cork.
 */
export class HttpServer {
  readonly app: TemplatedApp = uWS.App();
  private readonly router = new Router<Route>();
  private readonly guards = new Map<RouteSpec['auth'], Guard[]>();
  private readonly observers = new Map<RouteSpec['auth'], Observer[]>();
  private readonly policies = new Map<ApiFamily, CompiledPolicy>();
  private listenSocket: us_listen_socket | undefined;
  private inFlight = 0;
  private readonly registered: Pick<RouteSpec, 'method' | 'path' | 'auth'>[] = [];
  private idle: (() => void)[] = [];

  constructor(private readonly options: HttpServerOptions) {
    for (const [family, policy] of Object.entries(options.policies ?? {})) {
      if (policy) this.policy(family as ApiFamily, policy);
    }
    this.app.any('/*', (res, req) => this.dispatch(res, req));
  }

  /** Checks credentials as routes do (the push layer re-checks open streams' tokens with it). */
  get authenticator(): Authenticator {
    return this.options.authenticator;
  }

  /** Every registered route (method, path pattern, auth family), in registration order: for documents. */
  routes(): readonly Pick<RouteSpec, 'method' | 'path' | 'auth'>[] {
    return this.registered;
  }

  route(spec: RouteSpec): this {
    this.registered.push({ method: spec.method, path: spec.path, auth: spec.auth });
    this.router.add(spec.method, spec.path, { ...spec, style: spec.style ?? familyStyle(spec.auth, spec.path) });
    return this;
  }

  /** Registers a WebSocket endpoint (see SocketRouteSpec). */
  socket<T>(spec: SocketRouteSpec<T>): this {
    const style = familyStyle(spec.auth, spec.path);
    this.route({
      method: 'GET',
      path: spec.path,
      auth: spec.auth,
      style,
      handler: () => {
        throw new HttpError(426, 'upgrade_required', 'This endpoint is a WebSocket: connect with "Upgrade: websocket".', {
          headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
        });
      },
    });
    this.app.ws<SocketData<T>>(spec.path, {
      ...spec.behavior,
      upgrade: (res, uwsReq, context) => this.upgrade(spec, style, res, uwsReq, context),
    });
    return this;
  }

  /**
   * Authenticates a socket's request after the fact (its first message carried the token): sets the
   * principal, runs the family's guards, then `admit`. Throws the HttpError a route would answer with.
   */
  async authenticateSocket<T>(spec: SocketRouteSpec<T>, req: Request, token: string): Promise<T> {
    const header = `Bearer ${token}`;
    await this.authenticateRequest(spec.auth, req, header);
    return spec.admit(req);
  }

  private async authenticateRequest(auth: ApiFamily | 'admin', req: Request, header: string | undefined): Promise<void> {
    if (auth === 'admin') req.principal = this.options.authenticator.authenticateAdmin(header);
    else req.principal = await this.options.authenticator.authenticate(auth, header);
    for (const guard of this.guards.get(auth) ?? []) await guard(req);
  }

  private upgrade<T>(spec: SocketRouteSpec<T>, style: ErrorStyle, res: HttpResponse, uwsReq: HttpRequest, context: uWS.us_socket_context_t): void {
    const abort = new Abort();
    res.onAborted(() => abort.fire());
    const req = copyRequest(uwsReq, res, abort, this.options.log);
    const started = performance.now();
    const policy = this.policyFor(req.path, spec.auth);
    const key = req.headers['sec-websocket-key'] ?? '';
    const protocol = req.headers['sec-websocket-protocol'] ?? '';
    const extensions = req.headers['sec-websocket-extensions'] ?? '';
    const admitted = async (): Promise<T | undefined> => {
      if (spec.messageAuth && req.headers.authorization === undefined) return undefined;
      await this.authenticateRequest(spec.auth, req, req.headers.authorization);
      return spec.admit(req);
    };
    admitted().then(
      (state) => {
        if (abort.aborted) {
          if (state !== undefined) spec.release?.(state);
          return;
        }
        res.cork(() => res.upgrade<SocketData<T>>({ req, state }, key, protocol, extensions, context));
        this.logRequest(req, 101, started, undefined);
      },
      (err: unknown) => {
        if (!abort.aborted) this.respond(res, req, this.withHeaders(this.failure(err, style, req, false), req), policy, started);
      },
    );
  }

  /** Adds a guard to every route of a family (rate limits, say), run in the order added. */
  guard(auth: RouteSpec['auth'], guard: Guard): this {
    const list = this.guards.get(auth) ?? [];
    list.push(guard);
    this.guards.set(auth, list);
    return this;
  }

  /** Sets (or replaces) the response policy of a family: headers on every response, CORS. */
  policy(family: ApiFamily, policy: FamilyPolicy): this {
    this.policies.set(family, compilePolicy(policy));
    return this;
  }

  /** Adds an observer to every route of a family; it must not throw and should not block. */
  observe(auth: RouteSpec['auth'], observer: Observer): this {
    this.observers.set(auth, [...(this.observers.get(auth) ?? []), observer]);
    return this;
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
          return;
        }
        this.listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket));
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

  private dispatch(res: HttpResponse, uwsReq: HttpRequest): void {
    const abort = new Abort();
    const state = { aborted: false, done: false };
    res.onAborted(() => {
      state.aborted = true;
      abort.fire();
    });
    const req = copyRequest(uwsReq, res, abort, this.options.log);
    const started = performance.now();
    // Until a route is found, the path decides (an unknown path under /v2/ is still export v2's).
    let policy = this.policyFor(req.path);
    let finish = (reply: Reply) => {
      if (state.done) return;
      state.done = true;
      if (state.aborted) {
        req.log.info({ method: req.method, path: req.path, aborted: true }, 'request aborted by the client');
        return;
      }
      this.respond(res, req, reply, policy, started);
    };

    if (req.method === ('UNKNOWN' as Method)) {
      finish(errorReply(new HttpError(501, 'not_implemented', 'Unsupported HTTP method.'), styleForPath(req.path)));
      return;
    }
    const match = this.router.match(req.method, req.path);
    if (req.method === 'OPTIONS' && policy?.preflight && isPreflight(req)) {
      // Answered for any path under the prefix: the request that follows then gets a readable error.
      finish(preflightReply(req, policy, match.kind === 'not-found' ? undefined : match.allow));
      return;
    }
    if (match.kind === 'not-found') {
      const detail = match.suggestion
        ? match.suggestion.endsWith('/')
          ? `Not found. The trailing slash is required: ${match.suggestion}`
          : `Not found. This path takes no trailing slash: ${match.suggestion}`
        : 'Not found.';
      finish(errorReply(notFound(detail), styleForPath(req.path)));
      return;
    }
    if (match.kind === 'method-not-allowed' || req.method === 'OPTIONS') {
      const allow = match.allow.join(', ');
      if (req.method === 'OPTIONS') finish({ status: 204, headers: { Allow: allow } });
      else {
        const err = new HttpError(405, 'method_not_allowed', `Method "${req.method}" not allowed.`, { headers: { Allow: allow } });
        finish(errorReply(err, styleForPath(req.path)));
      }
      return;
    }

    const route = match.route;
    req.params = match.params;
    policy = this.policyFor(req.path, route.auth);
    const observers = this.observers.get(route.auth);
    if (observers) {
      const write = finish;
      finish = (reply: Reply) => {
        const first = !state.done && !state.aborted;
        write(reply);
        if (!first) return;
        for (const observe of observers) {
          try {
            observe(req, reply);
          } catch (err) {
            req.log.error({ err }, 'response observer failed');
          }
        }
      };
    }
    let body: Promise<Buffer> | undefined;
    if (route.body && BODY_METHODS.has(req.method)) {
      const declared = Number(req.headers['content-length']);
      if (declared > this.options.maxBodyBytes) {
        finish(errorReply(tooLarge(this.options.maxBodyBytes), route.style));
        return;
      }
      body = readBody(res, this.options.maxBodyBytes, abort);
      // A body that outgrows the cap is answered at once, whatever else is pending.
      body.catch((err) => {
        if (err instanceof HttpError) finish(this.withHeaders(errorReply(err, route.style), req));
      });
    }

    this.inFlight++;
    this.handle(route, req, body, state)
      .then((reply) => finish(this.withHeaders(reply, req)))
      .catch((err) => finish(this.withHeaders(this.failure(err, route.style, req, state.aborted), req)))
      .finally(() => {
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
  }

  /** The policy of a route's family, or of the family whose prefix the path has (no route, or none with a token). */
  private policyFor(path: string, auth?: RouteSpec['auth']): CompiledPolicy | undefined {
    if (auth === 'admin') return undefined;
    if (auth !== undefined && auth !== 'none') return this.policies.get(auth);
    for (const policy of this.policies.values()) if (path.startsWith(policy.prefix)) return policy;
    return undefined;
  }

  private async handle(route: Route, req: Request, body: Promise<Buffer> | undefined, state: { aborted: boolean }): Promise<Reply> {
    if (route.auth === 'admin') req.principal = this.options.authenticator.authenticateAdmin(req.headers.authorization);
    else if (route.auth !== 'none') {
      req.principal = await this.options.authenticator.authenticate(route.auth, req.headers.authorization);
    }
    for (const guard of this.guards.get(route.auth) ?? []) {
      await guard(req);
      if (state.aborted) throw new Error('request aborted');
    }
    if (body) req.body = await body;
    if (state.aborted) throw new Error('request aborted');
    return route.handler(req);
  }

  private failure(err: unknown, style: ErrorStyle, req: Request, aborted: boolean): Reply {
    if (err instanceof HttpError) return errorReply(err, style);
    if (!aborted) req.log.error({ err }, 'request failed');
    return errorReply(new HttpError(500, 'internal_error', 'Unexpected platform error; please report it.'), style);
  }

  /** Writes a reply with its family's policy applied, then logs the request. */
  private respond(res: HttpResponse, req: Request, reply: Reply, policy: CompiledPolicy | undefined, started: number): void {
    // The connection is gone from uWS once answered: read what the access log wants first.
    const remoteAddress = this.options.log.isLevelEnabled('info') || reply.status >= 500 ? req.remoteAddress : undefined;
    if (!policy) this.write(res, req, reply, '');
    else if (keepsPolicyHeaders(reply, policy)) this.write(res, req, reply, policy.block);
    else this.write(res, req, decorate(reply, policy), '');
    this.logRequest(req, reply.status, started, remoteAddress);
  }

  private withHeaders(reply: Reply, req: Request): Reply {
    if (Object.keys(req.responseHeaders).length === 0) return reply;
    return { ...reply, headers: { ...req.responseHeaders, ...reply.headers } };
  }

  /**
   * Writes a reply and, after its own headers, `extra` (pre-rendered header lines, see `headerBlock`).
   * Every header goes out in one `writeHeader` call: uWS writes a value as it is given, so the
   * request id's value carries the further lines. One call instead of one per header is a measurable
   * share of a small response's cost.
   */
  private write(res: HttpResponse, req: Request, reply: Reply, extra: string): void {
    let head: string;
    try {
      head = req.id + (reply.headers ? headerBlock(reply.headers) : '') + extra;
    } catch (err) {
      req.log.error({ err }, 'response not sent as built');
      reply = errorReply(new HttpError(500, 'internal_error', 'Unexpected platform error; please report it.'), styleForPath(req.path));
      head = req.id + headerBlock(reply.headers ?? {}) + extra;
    }
    res.cork(() => {
      res.writeStatus(`${reply.status} ${statusText(reply.status)}`);
      res.writeHeader('X-Request-Id', head);
      if (reply.status === 204 || reply.status === 304) {
        // No Content-Length on these (RFC 9110 8.6); uWS omits it only when called without arguments.
        res.endWithoutBody();
      } else if (req.method === 'HEAD') {
        const length = reply.body === undefined ? 0 : Buffer.byteLength(reply.body);
        if (reply.closeConnection) res.endWithoutBody(length, true);
        else {
          // Given a length, this uWS build closes the connection after the response, and a keep-alive
          // client's next request on it fails: write the length, end without arguments.
          res.writeHeader('Content-Length', String(length));
          res.endWithoutBody();
        }
      } else {
        res.end(reply.body ?? '', reply.closeConnection);
      }
    });
  }

  private logRequest(req: Request, status: number, started: number, remoteAddress: string | undefined): void {
    if (status < 500 && !this.options.log.isLevelEnabled('info')) return;
    const entry = {
      method: req.method,
      path: req.path,
      status,
      remote_address: remoteAddress,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      ...(req.principal ? principalFields(req.principal) : {}),
    };
    if (status >= 500) req.log.error(entry, 'request');
    else req.log.info(entry, 'request');
  }
}

function principalFields(principal: NonNullable<Request['principal']>): Record<string, string> {
  switch (principal.kind) {
    case 'originator':
      return { originator: principal.id, token_id: principal.tokenId };
    case 'user':
      return { user: principal.id, token_id: principal.tokenId };
    case 'client':
      return { token_id: principal.tokenId };
    case 'admin':
      return { admin: 'true' };
  }
}

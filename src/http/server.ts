import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { API_FAMILIES, type ApiFamily, type Authenticator } from './auth.js';
import { HttpError, errorReply, notFound, statusText, styleForPath, type ErrorStyle, type Reply } from './errors.js';
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

/** Cross-origin access for browser clients (CORS), for a family that enables it. */
export interface CorsPolicy {
  /** What a preflight allows (`Access-Control-Allow-Methods`). */
  methods: readonly Method[];
  /** Request headers always allowed; further well-formed names a preflight asks for are echoed. */
  allowHeaders: readonly string[];
  /** Response headers a script may read besides the CORS-safelisted ones. */
  exposeHeaders: readonly string[];
  /** How long a browser may cache a preflight answer (`Access-Control-Max-Age`), in seconds. */
  maxAgeSeconds: number;
}

/**
 * What every response of an API family carries. A response belongs to a family when its route takes
 * that family's token, or, for responses no such route produces (an unknown path, 405, OPTIONS, 501, a
 * route without authentication such as a docs page), when its path starts with the family's prefix.
 */
export interface FamilyPolicy {
  prefix: string;
  /** Headers on every response: successes, errors (401 included), 304s, preflights. */
  headers?: Readonly<Record<string, string>>;
  /**
   * `Access-Control-Allow-Origin: *` and `Access-Control-Expose-Headers` on every response, and CORS
   * preflights (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) answered 204 before any
   * authentication, guard or route: they need no token and count against no limit.
   */
  cors?: CorsPolicy;
}

/** The licence of everything export v2 publishes, as a `Link` header (RFC 8288). */
export const EXPORT_V2_LICENCE_LINK = '<https://creativecommons.org/licenses/by/4.0/>; rel="license"';

/**
 * Export v2 (`/v2/...`): open data under CC BY 4.0, readable by browser scripts of any origin. No
 * credentials mode is needed (the token travels in `Authorization`, not a cookie), so the origin is
 * `*` and nothing varies by `Origin`.
 */
export const EXPORT_V2_POLICY: FamilyPolicy = {
  prefix: '/v2/',
  headers: { Link: EXPORT_V2_LICENCE_LINK },
  cors: {
    methods: ['GET', 'HEAD', 'OPTIONS'],
    allowHeaders: ['Authorization', 'If-Modified-Since', 'Content-Type'],
    exposeHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Last-Modified', 'Link', 'X-Request-Id'],
    maxAgeSeconds: 86_400,
  },
};

export interface HttpServerOptions {
  log: Logger;
  maxBodyBytes: number;
  authenticator: Authenticator;
  /** Per-family response policies (the platform gives export v2 {@link EXPORT_V2_POLICY}); none by default. */
  policies?: Partial<Record<ApiFamily, FamilyPolicy>>;
}

/** A policy ready to apply: every header worked out once. */
interface Policy {
  prefix: string;
  /** Added to every response. */
  headers: Record<string, string>;
  /** The lower-case names of `headers`, to the spelling used there. */
  names: Map<string, string>;
  /** A preflight's answer (besides `headers`), when CORS is on; `Access-Control-Allow-Headers` is added per request. */
  preflight?: Record<string, string>;
  allowHeaders: string[];
  allowHeadersLower: Set<string>;
}

/** Response headers whose values are lists: a reply's own value is joined to the policy's, not replacing it. */
const LIST_HEADERS = new Set(['link', 'vary', 'access-control-expose-headers']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const MAX_ECHOED_HEADERS = 32;

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
  private readonly policies = new Map<ApiFamily, Policy>();
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

  /** Every registered route (method, path pattern, auth family), in registration order: for documents. */
  routes(): readonly Pick<RouteSpec, 'method' | 'path' | 'auth'>[] {
    return this.registered;
  }

  route(spec: RouteSpec): this {
    this.registered.push({ method: spec.method, path: spec.path, auth: spec.auth });
    this.router.add(spec.method, spec.path, { ...spec, style: spec.style ?? familyStyle(spec.auth, spec.path) });
    return this;
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
    const headers: Record<string, string> = { ...policy.headers };
    let preflight: Record<string, string> | undefined;
    const allowHeaders = [...(policy.cors?.allowHeaders ?? [])];
    if (policy.cors) {
      headers['Access-Control-Allow-Origin'] = '*';
      if (policy.cors.exposeHeaders.length > 0) headers['Access-Control-Expose-Headers'] = policy.cors.exposeHeaders.join(', ');
      preflight = {
        'Access-Control-Allow-Methods': policy.cors.methods.join(', '),
        'Access-Control-Max-Age': String(policy.cors.maxAgeSeconds),
        // The allowed headers echo the request's: a cache must keep answers to different asks apart.
        Vary: 'Access-Control-Request-Headers',
      };
    }
    this.policies.set(family, {
      prefix: policy.prefix,
      headers,
      names: new Map(Object.keys(headers).map((name) => [name.toLowerCase(), name])),
      preflight,
      allowHeaders,
      allowHeadersLower: new Set(allowHeaders.map((name) => name.toLowerCase())),
    });
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
    const logging = this.options.log.isLevelEnabled('info');
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
      // The connection is gone from uWS once answered: read what the access log wants first.
      const remoteAddress = logging || reply.status >= 500 ? req.remoteAddress : undefined;
      this.write(res, req, policy ? decorate(reply, policy) : reply);
      this.logRequest(req, reply.status, started, remoteAddress);
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
      .catch((err) => finish(this.withHeaders(this.failure(err, route, req, state.aborted), req)))
      .finally(() => {
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
  }

  /** The policy of a route's family, or of the family whose prefix the path has (no route, or none with a token). */
  private policyFor(path: string, auth?: RouteSpec['auth']): Policy | undefined {
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

  private failure(err: unknown, route: Route, req: Request, aborted: boolean): Reply {
    if (err instanceof HttpError) return errorReply(err, route.style);
    if (!aborted) req.log.error({ err }, 'request failed');
    return errorReply(new HttpError(500, 'internal_error', 'Unexpected platform error; please report it.'), route.style);
  }

  private withHeaders(reply: Reply, req: Request): Reply {
    if (Object.keys(req.responseHeaders).length === 0) return reply;
    return { ...reply, headers: { ...req.responseHeaders, ...reply.headers } };
  }

  private write(res: HttpResponse, req: Request, reply: Reply): void {
    res.cork(() => {
      res.writeStatus(`${reply.status} ${statusText(reply.status)}`);
      res.writeHeader('X-Request-Id', req.id);
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.writeHeader(name, value);
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

/** A CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
function isPreflight(req: Request): boolean {
  return req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
}

/**
 * 204 with what a browser checks: methods, headers (the policy's, plus whatever the preflight asks for
 * when every name is well-formed and there are not too many), max age. A method outside the policy is
 * not refused here: the browser sees it missing from `Access-Control-Allow-Methods` and stops.
 */
function preflightReply(req: Request, policy: Policy, allow: readonly Method[] | undefined): Reply {
  const names = [...policy.allowHeaders];
  const asked = (req.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (asked.length <= MAX_ECHOED_HEADERS && asked.every((name) => HEADER_NAME.test(name))) {
    const seen = new Set(policy.allowHeadersLower);
    for (const name of asked) {
      if (seen.has(name.toLowerCase())) continue;
      seen.add(name.toLowerCase());
      names.push(name);
    }
  }
  const headers: Record<string, string> = { ...policy.preflight };
  if (names.length > 0) headers['Access-Control-Allow-Headers'] = names.join(', ');
  if (allow) headers.Allow = allow.join(', ');
  return { status: 204, headers };
}

/**
 * The policy's headers under the reply's own. A reply's header replaces the policy's of the same name
 * (any case), except list-valued ones (`Link`, `Vary`, `Access-Control-Expose-Headers`), which are joined.
 */
function decorate(reply: Reply, policy: Policy): Reply {
  if (!reply.headers) return { ...reply, headers: policy.headers };
  const headers: Record<string, string> = { ...policy.headers };
  for (const [name, value] of Object.entries(reply.headers)) {
    const lower = name.toLowerCase();
    const existing = policy.names.get(lower);
    if (existing === undefined) headers[name] = value;
    else if (LIST_HEADERS.has(lower)) headers[existing] = `${headers[existing]}, ${value}`;
    else {
      delete headers[existing];
      headers[name] = value;
    }
  }
  return { ...reply, headers };
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

import type { HttpRequest, HttpResponse, WebSocketBehavior, us_socket_context_t } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Family, FamilyState } from './family.js';
import type { TrustProxy } from './client-address.js';
import type { RouteDoc } from './contract.js';
import { checkQuery, type QuerySchema } from './query.js';
import { Abort, copyRequest, type Request } from './request.js';
import { failure, logRequest, respond, withRequestHeaders, type ErrorClassifier } from './respond.js';

/** What every WebSocket of a socket route carries: the upgrade request (principal set once authenticated) and the route's own data. */
export interface SocketData<T> {
  req: Request;
  /** The route's own per-connection state (from `admit`), undefined until authenticated. */
  state: T | undefined;
  /** Set when uWS reports the socket closed: an `open` still waiting (see {@link socketBehavior}) then never runs. */
  closed?: boolean;
  /** Closes the socket at its maximum age (see {@link socketBehavior}); cleared when it closes. */
  ageTimer?: NodeJS.Timeout;
}

/** The close a socket gets at its maximum age (PUSH_MAX_AGE): 1001, as at a shutdown, so a client reconnects. */
export const MAX_AGE_CLOSE = { code: 1001, reason: 'stream at its maximum age: reconnect' } as const;

/**
 * When a socket opened now is closed for its age, in milliseconds: a whole number of seconds between
 * 90 % of the maximum and the maximum, so that streams opened together (every client of a restarted
 * instance) do not all come back together, and Node keeps few timer lists (one per second used).
 */
export function maxAgeMs(maxAgeSeconds: number, random: () => number = Math.random): number {
  const spread = Math.floor(maxAgeSeconds / 10);
  return (maxAgeSeconds - Math.min(spread, Math.floor(random() * (spread + 1)))) * 1000;
}

/**
 * A WebSocket endpoint. The upgrade request goes through the same pipeline as any route of its
 * family: a token in `Authorization` is authenticated and the family's guards run (so a connection
 * counts once against a rate limit), then `admit` (may refuse with an HttpError); any refusal is an
 * HTTP response in the family's error format with the family's headers, and nothing is upgraded. With
 * `messageAuth` a request without `Authorization` is upgraded unauthenticated, for clients that cannot
 * set headers (browsers), and the route authenticates its first message with `authenticateSocket`.
 * A plain GET without `Upgrade: websocket` is answered 426.
 */
export interface SocketRouteSpec<T> {
  family: Family;
  path: string;
  messageAuth: boolean;
  /**
   * Takes no credential (its family may have no authentication): upgraded after the family's guards
   * when it runs them on public routes (`guardsOnPublicRoutes`), then `admit`.
   */
  public?: boolean;
  /** The query parameters it takes, the keys of this schema (see RouteSpec in ./server.ts); checked on the upgrade and the plain GET. */
  query?: QuerySchema;
  /** Its operation in its family's document (see RouteSpec), as the plain GET's. */
  doc?: RouteDoc;
  /** Runs once the principal is known, before upgrading (header) or after the auth message; its result is `state`. */
  admit: (req: Request) => Promise<T> | T;
  /**
   * The uWS behaviour (limits, open, message, drain, close); `upgrade` is the server's. `open` runs
   * just after the upgrade has returned, not inside it (see {@link socketBehavior}); `close` may come
   * without `open` for a socket closed before its `open` ran, and undoes `admit` all the same.
   */
  behavior: Omit<WebSocketBehavior<SocketData<T>>, 'upgrade'>;
  /** Undoes `admit` for a connection that never opened (the client left during the upgrade). */
  release?: (state: T) => void;
}

/** What an upgrade needs of the server. */
export interface UpgradeContext {
  log: Logger;
  trustProxy?: TrustProxy;
  authenticate: (req: Request, header: string | undefined) => Promise<void>;
  classify: ErrorClassifier | undefined;
  /** Tells the server's answer hook. */
  answered: (req: Request, status: number, started: number) => void;
}

/** The uWS `upgrade` of a socket route: authenticate and admit (unless left to the first message), then upgrade or refuse. */
export function upgradeHandler<T>(spec: SocketRouteSpec<T>, family: FamilyState, context: UpgradeContext) {
  const { log, authenticate } = context;
  return (res: HttpResponse, uwsReq: HttpRequest, socketContext: us_socket_context_t): void => {
    const abort = new Abort();
    res.onAborted(() => abort.fire());
    const req = copyRequest(uwsReq, res, abort, log, context.trustProxy);
    req.route = spec.path;
    const started = performance.now();
    const key = req.headers['sec-websocket-key'] ?? '';
    const protocol = req.headers['sec-websocket-protocol'] ?? '';
    const extensions = req.headers['sec-websocket-extensions'] ?? '';
    const admitted = async (): Promise<T | undefined> => {
      checkQuery(spec.query, req);
      if (spec.messageAuth && req.headers.authorization === undefined) return undefined;
      await authenticate(req, req.headers.authorization);
      return spec.admit(req);
    };
    admitted().then(
      (state) => {
        if (abort.aborted) {
          if (state !== undefined) spec.release?.(state);
          return;
        }
        // Read while the connection is still the request's: an `auth` message is authenticated later.
        void req.remoteAddress;
        // The route's `open` runs after this returns (socketBehavior): inside, it could get the socket shut.
        res.cork(() => res.upgrade<SocketData<T>>({ req, state }, key, protocol, extensions, socketContext));
        logRequest(log, req, 101, started, undefined);
        context.answered(req, 101, started);
      },
      (err: unknown) => {
        if (abort.aborted) return;
        const reply = withRequestHeaders(failure(err, family, req, context.classify), req);
        respond(log, res, req, reply, family, started);
        context.answered(req, reply.status, started);
      },
    );
  };
}

/**
 * The route's behaviour as uWS gets it: its `open` runs once the upgrade has returned (a microtask
 * later, before anything else can reach the socket: no message, drain or close of the client's can
 * come in between), never inside it.
 *
 * Why: with this uWebSockets.js build, an upgrade made after an await (`res.cork(() =>
 * res.upgrade(...))` in {@link upgradeHandler}) can shut the new WebSocket down right after its
 * `open` (the client sees 1006, no close frame, within a millisecond). When the cork's callback
 * returns, uWS's HttpResponse::cork tells an upgraded socket from an HTTP one by comparing pointers;
 * the upgrade shrinks the socket's memory with realloc, which keeps the address, so cork takes the
 * WebSocket for the HTTP response and reads the response's `state` from the bytes the realloc freed.
 * `open` runs inside that callback: whatever it allocates natively (ws.subscribe, a timer, a send
 * that spills) may land there, and when the byte read has the connection-close flag set and the
 * response-pending flag clear, cork sends FIN and closes the socket (strace: the 101 and the first
 * message written, then shutdown and close in the same call). It was seen on 10 to 45 % of the
 * servers whose upgrade waited for Redis, more often in processes that had run other servers (a
 * busier heap); an upgrade decided inside uWS's own handler takes another path and never was. The
 * fix upstream compares the socket's context too (uWebSockets pull request 1929, "Fix cork()
 * closing a WebSocket that was upgraded asynchronously", newer than this build). Until a build
 * with it can be used, nothing of the route's runs between the realloc and that check:
 * test/unit/http-core.test.ts reproduces the drop on every socket without this and none with it.
 *
 * With `maxAgeSeconds` (PUSH_MAX_AGE), every socket is closed with {@link MAX_AGE_CLOSE} once it has
 * been open that long at most ({@link maxAgeMs}): a stream never outlives the limit the docs give, a
 * client's reconnection lands where the load balancer sends it now (an instance restarted or added
 * gets its share back), and a proxy's old worker or process holding it after a reload is let go.
 */
export function socketBehavior<T>(behavior: SocketRouteSpec<T>['behavior'], maxAgeSeconds?: number): SocketRouteSpec<T>['behavior'] {
  const { open, close } = behavior;
  return {
    ...behavior,
    open: (ws) => {
      if (!open && maxAgeSeconds === undefined) return;
      queueMicrotask(() => {
        const data = ws.getUserData();
        if (data.closed) return;
        if (maxAgeSeconds !== undefined) {
          data.ageTimer = setTimeout(() => {
            if (!data.closed) ws.end(MAX_AGE_CLOSE.code, MAX_AGE_CLOSE.reason);
          }, maxAgeMs(maxAgeSeconds)).unref();
        }
        open?.(ws);
      });
    },
    close: (ws, code, message) => {
      const data = ws.getUserData();
      data.closed = true;
      clearTimeout(data.ageTimer);
      close?.(ws, code, message);
    },
  };
}

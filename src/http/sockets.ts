import type { HttpRequest, HttpResponse, WebSocketBehavior, us_socket_context_t } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Family } from './family.js';
import type { TrustProxy } from './client-address.js';
import type { RouteDoc } from './contract.js';
import { checkQuery, type QuerySchema } from './query.js';
import { Abort, copyRequest, type Request } from './request.js';
import { failure, logRequest, respond, withRequestHeaders, type ErrorClassifier } from './respond.js';
import type { FamilyState } from './server.js';

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
  /** The uWS behaviour (limits, open, message, drain, close); `upgrade` is the server's. */
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

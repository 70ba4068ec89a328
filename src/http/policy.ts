import type { Reply } from './errors.js';
import type { Request } from './request.js';
import type { Method } from './router.js';

/**
 * Per-family response policies: headers every response of an API family carries, and CORS for
 * browser clients. The HTTP server applies them (src/http/server.ts) to every response of the family
 * that declares one (src/http/family.ts).
 */

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

/** What every response of an API family carries (see Family in ./family.ts for which responses those are). */
export interface FamilyPolicy {
  /** Headers on every response: successes, errors (401 included), 304s, preflights. */
  headers?: Readonly<Record<string, string>>;
  /**
   * `Access-Control-Allow-Origin: *` and `Access-Control-Expose-Headers` on every response, and CORS
   * preflights (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) answered 204 before any
   * authentication, guard or route: they need no token and count against no limit.
   */
  cors?: CorsPolicy;
}

/** A policy ready to apply: every header worked out once. */
export interface CompiledPolicy {
  /** Added to every response. */
  headers: Record<string, string>;
  /** The lower-case names of `headers`, to the spelling used there. */
  names: Map<string, string>;
  /** `headers` rendered once as header lines (`\r\nName: value` each), for replies that name none of them. */
  block: string;
  /** A preflight's answer (besides `headers`), when CORS is on; `Access-Control-Allow-Headers` is added per request. */
  preflight?: Record<string, string>;
  allowHeaders: string[];
  allowHeadersLower: Set<string>;
}

/** Response headers whose values are lists: a reply's own value is joined to the policy's, not replacing it. */
const LIST_HEADERS = new Set(['link', 'vary', 'access-control-expose-headers']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const MAX_ECHOED_HEADERS = 32;

/** Works out every header of a policy once. */
export function compilePolicy(policy: FamilyPolicy): CompiledPolicy {
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
  return {
    headers,
    names: new Map(Object.keys(headers).map((name) => [name.toLowerCase(), name])),
    block: headerBlock(headers),
    preflight,
    allowHeaders,
    allowHeadersLower: new Set(allowHeaders.map((name) => name.toLowerCase())),
  };
}

/** A CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(req: Request): boolean {
  return req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
}

/**
 * 204 with what a browser checks: methods, headers (the policy's, plus whatever the preflight asks for
 * when every name is well-formed and there are not too many), max age. A method outside the policy is
 * not refused here: the browser sees it missing from `Access-Control-Allow-Methods` and stops.
 */
export function preflightReply(req: Request, policy: CompiledPolicy, allow: readonly Method[] | undefined): Reply {
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

/** Header values are written as they are: one holding a line break would end its line early. */
const LINE_BREAK = /[\r\n]/;

/**
 * Headers rendered as the lines of a response head, each `\r\nName: value`, so that a whole set is
 * written in one call (see HttpServer's `write`). Throws on a name that is not a token or a value with
 * a line break: header values are the platform's own, and one that could split a line is a bug.
 */
export function headerBlock(headers: Readonly<Record<string, string>>): string {
  let block = '';
  for (const name in headers) {
    const value = headers[name]!;
    if (!safeName(name) || LINE_BREAK.test(value)) throw new Error(`unsafe response header ${JSON.stringify(name)}: ${JSON.stringify(value)}`);
    block += `\r\n${name}: ${value}`;
  }
  return block;
}

/** Header names found safe, with their lower case: the same few names come with every response. */
const checkedNames = new Map<string, string>();
const MAX_CHECKED_NAMES = 1000;

function safeName(name: string): boolean {
  if (checkedNames.has(name)) return true;
  if (!HEADER_NAME.test(name)) return false;
  if (checkedNames.size < MAX_CHECKED_NAMES) checkedNames.set(name, name.toLowerCase());
  return true;
}

const lowerCase = (name: string): string => checkedNames.get(name) ?? name.toLowerCase();

/** Whether a reply names none of the policy's headers, so that the policy's `block` can follow it unchanged. */
export function keepsPolicyHeaders(reply: Reply, policy: CompiledPolicy): boolean {
  for (const name in reply.headers) if (policy.names.has(lowerCase(name))) return false;
  return true;
}

/**
 * The policy's headers under the reply's own. A reply's header replaces the policy's of the same name
 * (any case), except list-valued ones (`Link`, `Vary`, `Access-Control-Expose-Headers`), which are joined.
 */
export function decorate(reply: Reply, policy: CompiledPolicy): Reply {
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

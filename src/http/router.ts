/** Method-and-path dispatch with `:name` segments, 405 with `Allow`, and trailing-slash hints. */

/**
 * The methods the core knows. TRACE is known but never routed: a path that exists answers it 405
 * with `Allow`, like any method it does not take.
 */
export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'TRACE';

interface Compiled<T> {
  pattern: string;
  segments: string[];
  params: number;
  byMethod: Map<Method, T>;
  /** The methods it answers (for Allow), made once after the last route was added. */
  allow: Method[] | undefined;
}

export type Match<T> =
  | { kind: 'found'; route: T; params: Readonly<Record<string, string>>; allow: Method[] }
  | { kind: 'method-not-allowed'; allow: Method[] }
  | { kind: 'not-found'; suggestion?: string };

interface Found<T> {
  compiled: Compiled<T>;
  /** Shared by every request of the path: read only. */
  params: Readonly<Record<string, string>>;
}

/** How many paths `Router.matched` keeps at most. */
const MATCHED_PATHS = 10_000;

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

export class Router<T> {
  private readonly exact = new Map<string, Compiled<T>>();
  /** Patterns with parameters by their number of segments (a path is only tried against its own length). */
  private readonly dynamic = new Map<number, Compiled<T>[]>();
  /**
   * Paths a pattern with parameters matched lately, with what it matched (its parameters decoded and
   * frozen: every request of the path shares them): a station's status is asked for again and again,
   * and splitting, trying the patterns and decoding cost more than one lookup. Emptied when full.
   */
  private readonly matched = new Map<string, Found<T>>();

  add(method: Method, pattern: string, route: T): void {
    const segments = pattern.split('/');
    let compiled = this.exact.get(pattern) ?? this.dynamic.get(segments.length)?.find((c) => c.pattern === pattern);
    if (!compiled) {
      const params = segments.filter((s) => s.startsWith(':')).length;
      compiled = { pattern, segments, params, byMethod: new Map(), allow: undefined };
      if (params === 0) this.exact.set(pattern, compiled);
      else {
        const same = this.dynamic.get(segments.length) ?? [];
        same.push(compiled);
        // Fewer parameters first: `/v2/hrs/status` wins over `/v2/hrs/:hrs_id`.
        same.sort((a, b) => a.params - b.params);
        this.dynamic.set(segments.length, same);
      }
    }
    if (compiled.byMethod.has(method)) throw new Error(`route ${method} ${pattern} registered twice`);
    compiled.byMethod.set(method, route);
    compiled.allow = undefined;
    this.matched.clear();
  }

  match(method: Method, path: string): Match<T> {
    const found = this.lookup(path);
    if (!found) return { kind: 'not-found', ...this.suggest(path) };
    const allow = (found.compiled.allow ??= allowed(found.compiled));
    const route = found.compiled.byMethod.get(method) ?? (method === 'HEAD' ? found.compiled.byMethod.get('GET') : undefined);
    if (route === undefined) return { kind: 'method-not-allowed', allow };
    return { kind: 'found', route, params: found.params, allow };
  }

  private lookup(path: string): Found<T> | undefined {
    const exact = this.exact.get(path);
    if (exact) return { compiled: exact, params: NO_PARAMS };
    const known = this.matched.get(path);
    if (known) return known;
    const parts = path.split('/');
    for (const compiled of this.dynamic.get(parts.length) ?? []) {
      const params = matchSegments(compiled.segments, parts);
      if (!params) continue;
      const found = { compiled, params: Object.freeze(params) };
      if (this.matched.size >= MATCHED_PATHS) this.matched.clear();
      this.matched.set(path, found);
      return found;
    }
    return undefined;
  }

  private suggest(path: string): { suggestion?: string } {
    const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    if (other.length > 0 && this.lookup(other)) return { suggestion: other };
    return {};
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  // The literal segments first: most patterns of the same length differ there, and cost no decoding.
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    if (want.charCodeAt(0) !== COLON && want !== parts[i]) return undefined;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    if (want.charCodeAt(0) !== COLON) continue;
    const value = decodeSegment(parts[i]!);
    if (value === undefined) return undefined;
    params[want.slice(1)] = value;
  }
  return params;
}

const COLON = 0x3a;

/**
 * A path segment as a parameter's value, or undefined when no resource can have it as its id: empty,
 * invalid percent-encoding, or decoding to text PostgreSQL cannot store or compare (a NUL) or that is
 * not Unicode (a lone surrogate). Such a path matches no route: 404, in the family's format.
 */
export function decodeSegment(segment: string): string | undefined {
  if (segment === '') return undefined;
  let value: string;
  try {
    value = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return isStorableText(value) ? value : undefined;
}

/** Text without NUL and without lone surrogates: what PostgreSQL's UTF-8 text can hold. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** A NUL, or a surrogate that is not half of a pair (with the `u` flag, a pair is one code point). */
const UNSTORABLE = /[\0\p{Cs}]/u;

function allowed<T>(compiled: Compiled<T>): Method[] {
  const methods = new Set<Method>(compiled.byMethod.keys());
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  const order: Method[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  return order.filter((m) => methods.has(m));
}

/**
 * DATABASE_URL as libpq and postgres.js read it, which the WHATWG `URL` cannot: besides
 * `postgres://user:pass@host:5432/db`, a list of hosts, `postgres://h1:5432,h2:5433/db?target_session_attrs=read-write`,
 * tried in order until one is the primary (a deployment with a standby, see docs/deploy.md). Each
 * host is a name or an IPv4 address with an optional port (postgres.js splits the list on ":" and ",",
 * so an IPv6 address can only be the single host of a plain URL).
 */

export interface DatabaseAddress {
  host: string;
  port: number;
}

interface Parts {
  /** `postgres://` */
  scheme: string;
  /** `user:pass@`, or empty. */
  userinfo: string;
  /** `h1:5432,h2:5433` */
  hosts: string;
  /** `/db?…#…`, or empty. */
  rest: string;
}

const HOST_LIST = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?([^/?#]*)(.*)$/is;
const HOST = /^([A-Za-z0-9_.%-]+)(?::(\d{1,5}))?$/;

function parts(url: string): Parts | undefined {
  const match = HOST_LIST.exec(url);
  if (!match) return undefined;
  return { scheme: match[1]!, userinfo: match[2] ?? '', hosts: match[3]!, rest: match[4]! };
}

/** The URL with its host list replaced by `host`, for the WHATWG parser. */
function singleHost(p: Parts, host: string): string {
  return `${p.scheme}${p.userinfo}${host}${p.rest}`;
}

/** Whether DATABASE_URL names several hosts. */
export function isHostList(url: string): boolean {
  return (parts(url)?.hosts ?? '').includes(',');
}

/**
 * The hosts the URL names, in order (port 5432 where none is given, as libpq reads a list);
 * undefined when it is not a URL of `protocols` or a host is malformed.
 */
export function databaseHosts(url: string, protocols = ['postgres:', 'postgresql:']): DatabaseAddress[] | undefined {
  const p = parts(url);
  if (!p || !protocols.includes(p.scheme.slice(0, -2).toLowerCase())) return undefined;
  if (!p.hosts.includes(',')) {
    try {
      const parsed = new URL(url);
      return [{ host: parsed.hostname, port: Number(parsed.port || 5432) }];
    } catch {
      return undefined;
    }
  }
  const hosts: DatabaseAddress[] = [];
  for (const entry of p.hosts.split(',')) {
    const match = HOST.exec(entry);
    const port = Number(match?.[2] ?? 5432);
    if (!match || port < 1 || port > 65535) return undefined;
    hosts.push({ host: decodeURIComponent(match[1]!), port });
  }
  // The rest (user, database, parameters) must parse too.
  try {
    new URL(singleHost(p, p.hosts.split(',')[0]!));
  } catch {
    return undefined;
  }
  return hosts;
}

/** The URL's database, decoded ('' when it names none). */
export function databaseName(url: string): string {
  const p = parts(url);
  const parsed = new URL(p ? singleHost(p, p.hosts.split(',')[0]!) : url);
  return decodeURIComponent(parsed.pathname.replace(/^\//, ''));
}

/** The same URL (all its hosts, user and parameters) naming database `name` instead. */
export function withDatabase(url: string, name: string): string {
  const p = parts(url);
  if (!p) throw new Error('not a URL');
  const parsed = new URL(singleHost(p, 'placeholder'));
  parsed.pathname = `/${encodeURIComponent(name)}`;
  const text = parsed.toString();
  return `${p.scheme}${p.userinfo}${p.hosts}${text.slice(text.indexOf('placeholder') + 'placeholder'.length)}`;
}

/** The `target_session_attrs` parameter of the URL, if any. */
export function sessionAttrs(url: string): string | null {
  const p = parts(url);
  try {
    return new URL(p ? singleHost(p, 'placeholder') : url).searchParams.get('target_session_attrs');
  } catch {
    return null;
  }
}

/** A URL fit for messages and logs (any URL, DATABASE_URL's host list included): the password is replaced. */
export function redactUrl(value: string): string {
  const p = parts(value);
  if (!p?.hosts.includes(',')) {
    try {
      const parsed = new URL(value);
      if (parsed.password) parsed.password = '***';
      return parsed.toString();
    } catch {
      return '(unparseable URL)';
    }
  }
  try {
    new URL(singleHost(p, p.hosts.split(',')[0]!));
  } catch {
    return '(unparseable URL)';
  }
  const colon = p.userinfo.indexOf(':');
  const userinfo = colon >= 0 && colon < p.userinfo.length - 2 ? `${p.userinfo.slice(0, colon)}:***@` : p.userinfo;
  return `${p.scheme}${userinfo}${p.hosts}${p.rest}`;
}

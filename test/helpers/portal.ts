import { createHash, randomBytes } from 'node:crypto';
import { baseFixture } from './fixtures.js';
import { ADMIN_TOKEN, type TestPlatform } from './platform.js';

/**
 * The operator and originator portal in tests: a registry with two operators and two originators and
 * an account per role, sessions opened without e-mail (a session row for a known secret: the sign-in
 * itself is tested in test/platform/portal.test.ts), and a browser-like client that sends the service's Origin.
 */

/** The accounts of {@link portalFixture}, by role. */
export const ACCOUNTS = {
  /** Staff of h2-demo (BERLA, HAMBG). */
  staff: 'staff',
  /** Staff of north-h2 (KIELX). */
  otherStaff: 'north-staff',
  /** Manager of mon-1. */
  manager: 'manager',
  /** The admin role. */
  admin: 'root',
  /** An account with no role (alice of the base fixture). */
  none: 'alice',
} as const;

/** The base registry and a second operator with a station, a second originator, an account per role. */
export function portalFixture() {
  const base = baseFixture();
  return {
    ...base,
    operators: [...base.operators, { id: 'north-h2', name: 'North H2 AG', email: null }],
    stations: [
      ...base.stations,
      {
        hrs_id: 'KIELX',
        operator: 'north-h2',
        name: 'Kiel Harbour',
        layout: {
          dispensers: [{ external_id: 'K1', is_certified: true, nozzles: [{ external_id: 'KN1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] }],
          storages: [],
          products: [{ external_id: 'KP', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['KN1'] }],
        },
      },
    ],
    originators: [...base.originators, { id: 'mon-2', name: 'Monitoring Two', call_log_mode: 'always' }],
    users: [
      ...base.users,
      { id: ACCOUNTS.staff, email: 'staff@h2-demo.example' },
      { id: ACCOUNTS.otherStaff, email: 'staff@north-h2.example' },
      { id: ACCOUNTS.manager, email: 'manager@mon-1.example' },
      { id: ACCOUNTS.admin, email: 'root@platform.example' },
    ],
  };
}

/** Gives each account of {@link ACCOUNTS} its role through the admin API. */
export async function grantPortalRoles(p: TestPlatform): Promise<void> {
  const roles: [string, { admin: boolean; operators: string[]; originators: string[] }][] = [
    [ACCOUNTS.staff, { admin: false, operators: ['h2-demo'], originators: [] }],
    [ACCOUNTS.otherStaff, { admin: false, operators: ['north-h2'], originators: [] }],
    [ACCOUNTS.manager, { admin: false, operators: [], originators: ['mon-1'] }],
    [ACCOUNTS.admin, { admin: true, operators: [], originators: [] }],
  ];
  for (const [user, body] of roles) {
    const res = await fetch(`${p.url}/admin/v1/users/${user}/roles`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`roles of ${user}: ${res.status} ${await res.text()}`);
  }
}

export interface PortalAnswer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface PortalClient {
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<PortalAnswer>;
  /** A raw body (a photo upload). */
  send(method: string, path: string, bytes: Buffer, headers?: Record<string, string>): Promise<PortalAnswer>;
  cookie: string | undefined;
}

/** A browser-like client: the service's Origin on every request, the session cookie when given. */
export function portalClient(p: { url: string }, cookie?: string): PortalClient {
  const answer = async (res: Response): Promise<PortalAnswer> => {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, headers: res.headers, body };
  };
  const base = () => ({ Origin: p.url, ...(cookie ? { Cookie: cookie } : {}) });
  return {
    cookie,
    call: async (method, path, body, headers = {}) =>
      answer(await fetch(`${p.url}${path}`, {
        method,
        headers: { ...base(), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      })),
    send: async (method, path, bytes, headers = {}) =>
      answer(await fetch(`${p.url}${path}`, { method, headers: { ...base(), 'Content-Type': 'application/octet-stream', ...headers }, body: bytes })),
  };
}

/** A signed-in client of the account: a session row for a fresh secret, as a used sign-in link makes one. */
export async function signedIn(p: TestPlatform, userId: string): Promise<PortalClient> {
  const secret = randomBytes(32).toString('base64url');
  const hash = createHash('sha256').update(secret, 'utf8').digest();
  await p.sql`INSERT INTO portal_sessions (hash, user_id, expires_at) VALUES (${hash}, ${userId}, clock_timestamp() + interval '1 hour')`;
  return portalClient(p, `hrs_portal=${secret}`);
}

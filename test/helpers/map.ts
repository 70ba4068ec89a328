import { request } from 'node:http';
import { legacyFixture } from './fixtures.js';

/** Opening hours that are closed now: one hour, twelve hours from now (UTC). */
export function closedNow(): string {
  const hour = (new Date().getUTCHours() + 12) % 24;
  const two = (n: number) => String(n).padStart(2, '0');
  return `Mo-Su ${two(hour)}:00-${two(hour)}:59`;
}

/**
 * The public map's test registry: BERLA (700ld, 350ld; an address object), TRUCK (700ld, 700hd, 350hd;
 * a one-line address) and CLOSD (closed now; its city beside the coordinates, as v1.1's AFIR details
 * give it) have coordinates; HAMBG has none, so the map leaves it
 * out. mon-1 is live for the availability of BERLA, TRUCK and CLOSD through import v2, and BERLA's usage.
 */
export function mapFixture() {
  const f = legacyFixture();
  const byId = (id: string) => f.stations.find((s) => (s as { hrs_id: string }).hrs_id === id) as Record<string, unknown>;
  byId('BERLA').details = {
    vehicle_types: ['M1'],
    coordinates: { lat: 52.3667, lon: 13.5033 },
    address: { street: 'Melli-Beese-Ring', house_number: '1', postal_code: '12529', city: 'Schönefeld', country: 'de' },
  };
  byId('BERLA').time_zone = 'Europe/Berlin';
  byId('TRUCK').details = { lat: 53.55, lon: 9.99, address: 'Am Hafen 7, 20457 Hamburg', country: 'DE' };
  f.stations.push({
    hrs_id: 'CLOSD',
    operator: 'h2-demo',
    name: 'Closed Now',
    opening_hours: closedNow(),
    time_zone: 'UTC',
    details: { lat: 48.1, lon: 11.5, city: 'München' },
    v1_fuel_types: ['700car'],
  } as Record<string, unknown>);
  f.assignments.push(
    { originator: 'mon-1', hrs_id: 'TRUCK', signal_type: 'availability', state: 'live' },
    { originator: 'mon-1', hrs_id: 'CLOSD', signal_type: 'availability', state: 'live' },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' },
  );
  return f;
}

/** Raw bytes and headers, without fetch's own decoding (to see the encoded body as sent). */
export function raw(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

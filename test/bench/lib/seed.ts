/**
 * Set-based seeding of large benchmark registries: N stations (each with a confirmed layout: dispenser
 * D1 with nozzles N1 and N2, storage S1, products P700 and P350, and AFIR-like static details), an
 * operator, an originator live for all four signal types at every station, and optionally one
 * published snapshot per station and category in the shape import v2 stores them.
 */
import type { Sql } from '../../../db/connect.js';
import { CATEGORIES } from '../../../src/domain/categories/index.js';

export interface SeedOptions {
  stations: number;
  /** Ages of the published readings (ms); none are written when absent. */
  readings?: { spreadMs: number; pricingSpreadMs: number };
  /**
   * Where the stations stand: `line` (default) on one diagonal across Germany, as the export scenarios
   * have always had them; `europe` spread over Europe around `EUROPEAN_CITIES` (see there), each with
   * its city's time zone, for what draws or searches them by place.
   */
  places?: 'line' | 'europe';
}

/**
 * Cities the `europe` stations gather around: latitude, longitude, time zone, and how far (degrees of
 * latitude, at most) its stations stray. Station i belongs to city i modulo their count and stands at a
 * pseudo-random offset from it (md5 of its number: the same on every run), denser near the centre.
 */
export const EUROPEAN_CITIES: readonly [number, number, string, number][] = [
  [52.52, 13.405, 'Europe/Berlin', 1.2], [53.551, 9.994, 'Europe/Berlin', 1.0], [48.137, 11.575, 'Europe/Berlin', 1.2],
  [50.938, 6.96, 'Europe/Berlin', 0.8], [50.11, 8.682, 'Europe/Berlin', 0.9], [48.776, 9.183, 'Europe/Berlin', 0.8],
  [51.34, 12.375, 'Europe/Berlin', 1.0], [52.375, 9.735, 'Europe/Berlin', 1.0], [48.857, 2.352, 'Europe/Paris', 1.5],
  [45.764, 4.836, 'Europe/Paris', 1.2], [43.296, 5.37, 'Europe/Paris', 1.0], [47.218, -1.554, 'Europe/Paris', 1.2],
  [51.507, -0.128, 'Europe/London', 1.4], [53.48, -2.242, 'Europe/London', 1.0], [55.953, -3.188, 'Europe/London', 1.0],
  [52.37, 4.895, 'Europe/Amsterdam', 0.7], [50.85, 4.352, 'Europe/Brussels', 0.7], [47.377, 8.541, 'Europe/Zurich', 0.8],
  [48.208, 16.373, 'Europe/Vienna', 1.0], [50.075, 14.437, 'Europe/Prague', 1.0], [52.23, 21.012, 'Europe/Warsaw', 1.5],
  [50.065, 19.945, 'Europe/Warsaw', 1.0], [55.676, 12.568, 'Europe/Copenhagen', 1.0], [59.329, 18.069, 'Europe/Stockholm', 1.5],
  [59.914, 10.752, 'Europe/Oslo', 1.2], [60.17, 24.938, 'Europe/Helsinki', 1.2], [45.464, 9.19, 'Europe/Rome', 1.0],
  [41.903, 12.496, 'Europe/Rome', 1.2], [40.852, 14.268, 'Europe/Rome', 0.8], [40.417, -3.704, 'Europe/Madrid', 1.5],
  [41.385, 2.173, 'Europe/Madrid', 1.0], [38.722, -9.139, 'Europe/Lisbon', 1.0], [47.498, 19.04, 'Europe/Budapest', 1.2],
  [46.056, 14.506, 'Europe/Ljubljana', 0.6], [44.427, 26.103, 'Europe/Bucharest', 1.2], [53.35, -6.26, 'Europe/Dublin', 1.0],
];

/** Station i's hrs_id: i in base 26, five letters (AAAAA, AAAAB, ...), as `seedRegistry` writes it. */
export function benchHrsId(i: number): string {
  let id = '';
  for (const d of [456976, 17576, 676, 26, 1]) id += String.fromCharCode(65 + (Math.floor(i / d) % 26));
  return id;
}

/**
 * The whole data set, statement by statement, in one transaction. Triggers (the station-set stamp and
 * the foreign-key checks) are off while it runs: the rows are generated consistent, and a row-level
 * trigger that updates one row 100,000 times in one transaction would take minutes on its own.
 */
export async function seedRegistry(sql: Sql, options: SeedOptions): Promise<void> {
  const STATIONS = options.stations;
  const [role] = await sql<{ rolsuper: boolean }[]>`SELECT rolsuper FROM pg_roles WHERE rolname = current_user`;
  await sql.begin(async (tx) => {
    await tx`SET LOCAL synchronous_commit = off`;
    // Superusers skip every trigger, foreign-key checks included; others at least the station-set stamp.
    if (role?.rolsuper) await tx`SET LOCAL session_replication_role = replica`;
    await tx`ALTER TABLE stations DISABLE TRIGGER stations_set_changed`;
    // Station i's hrs_id: i in base 26, five letters (AAAAA, AAAAB, ...).
    await tx`
      CREATE FUNCTION pg_temp.bench_hrs_id(i integer) RETURNS text IMMUTABLE LANGUAGE sql AS $$
        SELECT chr(65 + (i / 456976) % 26) || chr(65 + (i / 17576) % 26) || chr(65 + (i / 676) % 26)
            || chr(65 + (i / 26) % 26) || chr(65 + i % 26)
      $$`;
    await tx`INSERT INTO operators (id, name, email) VALUES ('bench-operator', 'Bench Hydrogen GmbH', 'ops@bench.example')`;
    await tx`INSERT INTO originators (id, name, call_log_mode) VALUES ('bench-monitor', 'Bench Monitoring', 'errors')`;
    const europe = options.places === 'europe';
    await tx`
      CREATE TEMPORARY TABLE bench_cities (n integer, lat float8, lon float8, zone text, spread float8) ON COMMIT DROP`;
    if (europe) {
      await tx`
        INSERT INTO bench_cities (n, lat, lon, zone, spread)
        SELECT n - 1, lat, lon, zone, spread
        FROM unnest(${EUROPEAN_CITIES.map((c) => c[0])}::float8[], ${EUROPEAN_CITIES.map((c) => c[1])}::float8[],
                    ${EUROPEAN_CITIES.map((c) => c[2])}::text[], ${EUROPEAN_CITIES.map((c) => c[3])}::float8[])
             WITH ORDINALITY AS c (lat, lon, zone, spread, n)`;
    }
    // Two pseudo-random numbers in [0, 1) per station from md5 of its number: the same on every run.
    // Squared distances from the centre (u²) put most stations near their city, a few far out.
    await tx`
      CREATE FUNCTION pg_temp.bench_unit(i integer, k integer) RETURNS float8 IMMUTABLE LANGUAGE sql AS $$
        SELECT ('x' || substr(md5(i::text || ':' || k::text), 1, 8))::bit(32)::bigint / 4294967296.0
      $$`;
    await tx`
      INSERT INTO stations (hrs_id, operator_id, name, heavy_duty, opening_hours, time_zone, details)
      SELECT pg_temp.bench_hrs_id(i), 'bench-operator', 'Bench station ' || (i + 1), i % 10 = 0,
             CASE WHEN i % 4 = 0 THEN 'Mo-Fr 06:00-22:00; Sa-Su 08:00-20:00' ELSE '24/7' END,
             c.zone,
             jsonb_build_object(
               'street', 'Wasserstoffstraße ' || (1 + i % 200), 'postal_code', lpad((10000 + i % 89999)::text, 5, '0'),
               'city', 'City ' || (i % 997), 'country', 'DE',
               'latitude', CASE WHEN c.n IS NULL THEN round((47.3 + (i % 5500) / 1000.0)::numeric, 6)
                 ELSE round((c.lat + c.spread * pg_temp.bench_unit(i, 1) ^ 2 * sin(2 * pi() * pg_temp.bench_unit(i, 2)))::numeric, 5) END,
               'longitude', CASE WHEN c.n IS NULL THEN round((5.9 + (i % 9100) / 1000.0)::numeric, 6)
                 ELSE round((c.lon + c.spread * pg_temp.bench_unit(i, 1) ^ 2 * cos(2 * pi() * pg_temp.bench_unit(i, 2))
                   / cos(radians(c.lat)))::numeric, 5) END,
               'vehicle_types', CASE WHEN i % 10 = 0 THEN jsonb_build_array('M1', 'N1', 'N3', 'M3') ELSE jsonb_build_array('M1', 'N1') END,
               'payment_methods', jsonb_build_array('fuel card', 'credit card'), 'phone', '+49 30 ' || (1000000 + i))
      FROM generate_series(0, ${STATIONS - 1}::integer) AS i
      LEFT JOIN bench_cities c ON c.n = i % ${EUROPEAN_CITIES.length}::integer`;
    await tx`
      INSERT INTO layouts (hrs_id, kind, version, content_hash, confirmed_at)
      SELECT hrs_id, 'confirmed', 1, sha256(convert_to(hrs_id, 'UTF8')), now() FROM stations`;
    await tx`
      INSERT INTO dispensers (layout_id, external_id, is_certified, position)
      SELECT id, 'D1', true, 1 FROM layouts`;
    await tx`
      INSERT INTO nozzles (layout_id, dispenser_id, external_id, connector_type, vehicle_side, is_certified, position)
      SELECT d.layout_id, d.id, n.external_id, n.connector_type, n.vehicle_side, n.is_certified, n.position
      FROM dispensers d
      CROSS JOIN (VALUES ('N1', 'H70', 'left', true, 1), ('N2', 'H35', 'right', false, 2))
        AS n (external_id, connector_type, vehicle_side, is_certified, position)`;
    await tx`
      INSERT INTO nozzle_fuelling_options (nozzle_id, fuelling_option, position)
      SELECT id, CASE external_id WHEN 'N1' THEN '700ld' ELSE '350ld' END, 1 FROM nozzles`;
    await tx`
      INSERT INTO storages (layout_id, external_id, nominal_capacity_kg, position)
      SELECT id, 'S1', 500, 1 FROM layouts`;
    await tx`
      INSERT INTO storage_dispensers (storage_id, dispenser_id, position)
      SELECT s.id, d.id, 1 FROM storages s JOIN dispensers d ON d.layout_id = s.layout_id`;
    await tx`
      INSERT INTO products (layout_id, external_id, pressure_stage, green_hydrogen_share, position)
      SELECT l.id, p.external_id, p.pressure_stage, p.green_hydrogen_share, p.position
      FROM layouts l CROSS JOIN (VALUES ('P700', 700, NULL::numeric, 1), ('P350', 350, 50::numeric, 2))
        AS p (external_id, pressure_stage, green_hydrogen_share, position)`;
    await tx`
      INSERT INTO product_nozzles (product_id, nozzle_id, position)
      SELECT p.id, n.id, 1
      FROM products p JOIN nozzles n ON n.layout_id = p.layout_id
        AND n.external_id = CASE p.external_id WHEN 'P700' THEN 'N1' ELSE 'N2' END`;
    await tx`
      INSERT INTO assignments (originator_id, hrs_id, signal_type, state)
      SELECT 'bench-monitor', s.hrs_id, t.signal_type, 'live'
      FROM stations s CROSS JOIN unnest(${tx.array([...CATEGORIES])}::text[]) AS t (signal_type)`;
    if (!options.readings) {
      await tx`ALTER TABLE stations ENABLE TRIGGER stations_set_changed`;
      await tx`UPDATE station_set SET modified_at = clock_timestamp()`;
      return;
    }
    const SPREAD_MS = options.readings.spreadMs;
    const PRICING_SPREAD_MS = options.readings.pricingSpreadMs;
    // One reading per station and category. Station i's reading of category k is (i * 7919 + k * 104729)
    // mod the spread milliseconds old: spread evenly, the same on every run, different per category.
    await tx`
      WITH readings AS (
        SELECT i, k, category,
               now() - make_interval(secs => ((i::bigint * 7919 + k * 104729) % (CASE category WHEN 'pricing'
                 THEN ${PRICING_SPREAD_MS}::bigint ELSE ${SPREAD_MS}::bigint END)) / 1000.0) AS measured_at
        FROM generate_series(0, ${STATIONS - 1}::integer) AS i
        CROSS JOIN unnest(${tx.array([...CATEGORIES])}::text[]) WITH ORDINALITY AS c (category, k)
      )
      INSERT INTO published_signals (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
      SELECT pg_temp.bench_hrs_id(i), category, 'bench-monitor', measured_at,
             measured_at + make_interval(secs => 0.2 + (i % 40) / 10.0),
             CASE WHEN i % 3 = 0 THEN 'tx-' || i || '-' || k END,
             CASE category
               WHEN 'availability' THEN jsonb_build_object(
                 'station', jsonb_build_object('maintenance', i % 97 = 0, 'limitedly_available', i % 13 = 0),
                 'nozzles', jsonb_build_array(
                   jsonb_build_object('id', 'N1', 'available', i % 7 <> 0),
                   jsonb_build_object('id', 'N2', 'available', i % 11 <> 0)),
                 'fuelling_options', jsonb_build_object('700ld', i % 7 <> 0, '350ld', i % 11 <> 0))
               WHEN 'usage' THEN jsonb_build_object(
                 'nozzles', jsonb_build_array(
                   jsonb_build_object('id', 'N1', 'usage_status', (ARRAY['free', 'in-use', 'reserved', 'free'])[1 + i % 4]),
                   jsonb_build_object('id', 'N2', 'usage_status', (ARRAY['free', 'free', 'in-use'])[1 + i % 3])))
               WHEN 'hydrogen-storage' THEN jsonb_build_object(
                 'storages', jsonb_build_array(jsonb_build_object(
                   'id', 'S1',
                   'remaining_kg', to_char((i * 37 % 50000) / 100.0, 'FM99990.00'),
                   'low_h2_storage', (i * 37 % 50000) < 10000)))
               ELSE jsonb_build_object(
                 'products', jsonb_build_array(
                   jsonb_build_object('id', 'P700', 'gross_price', to_char(12.5 + (i % 300) / 100.0, 'FM990.000'),
                     'net_price', to_char((12.5 + (i % 300) / 100.0) / 1.19, 'FM990.000'), 'currency', 'EUR'),
                   jsonb_build_object('id', 'P350', 'gross_price', to_char(10.5 + (i % 200) / 100.0, 'FM990.000'),
                     'net_price', NULL, 'currency', 'EUR')))
             END
      FROM readings`;
    await tx`ALTER TABLE stations ENABLE TRIGGER stations_set_changed`;
    await tx`UPDATE station_set SET modified_at = clock_timestamp()`;
  });
  await sql`ANALYZE`;
}

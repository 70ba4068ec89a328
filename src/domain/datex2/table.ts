import { createHash } from 'node:crypto';
import { coordinatesOf, pointOf } from '../coordinates.js';
import { holidayCountry } from '../opening-hours.js';
import type { FuellingOption } from '../vocabulary.js';
import { FUELLING_OPTIONS } from '../vocabulary.js';
import { V1_TO_CANONICAL } from '../import-v1/options.js';
import { datexHours, type DatexHours } from './operating-hours.js';
import { centsHalfUp } from './prices.js';

/**
 * The DATEX II energy infrastructure table of the network, as plain objects (what `src/api/datex2/xml/table.ts`
 * writes): one site with one station per HRS, one refill point per nozzle of the confirmed layout, one
 * energy rate per priced product. Pure: the caller hands in the registry's rows and the latest live
 * pricing reading of each station.
 *
 * Identifiers are stable and readable: the site is the `hrs_id`, its station `{hrs_id}-S`, a refill
 * point `{hrs_id}-N-{nozzle}` (nozzle ids are unique across a station), an energy rate
 * `{hrs_id}-R-{product}`. Every versioned object's `version` is the first 16 hex digits of the SHA-256
 * of its content (the object as published, children included), so it changes when its content changes
 * and only then, on every instance alike, without any state kept.
 */

/** What the table reads of a station: the registry's row (db/queries/stations.ts `StationRow` fits). */
export interface TableStationInput {
  hrs_id: string;
  /** `static_modified_at`, µs since the epoch. */
  modifiedUs: number;
  name: string;
  operator_id: string;
  operator_name: string;
  opening_hours: string | null;
  /** The IANA zone its hours are read in; null when unknown. */
  time_zone: string | null;
  details: Record<string, unknown>;
  v1_fuel_types: string[];
  dispensers: { external_id: string; nozzles: { external_id: string; fuelling_options: string[] }[] }[] | null;
  products: { external_id: string; pressure_stage: number; green_hydrogen_share: number | null; nozzle_external_ids: string[] }[] | null;
}

/** The latest live pricing reading of a station: its measurement time (epoch ms) and products as stored. */
export interface PricingInput {
  datetime: number;
  receivedAt: number;
  products: readonly Record<string, unknown>[];
}

export interface Coordinates {
  latitude: number;
  longitude: number;
}

export interface AddressModel {
  postcode?: string;
  city?: string;
  countryCode?: string;
  lines: { type: 'street' | 'houseNumber' | 'generalTextLine'; text: string }[];
}

export interface EnergyRateModel {
  id: string;
  product: string;
  currency: string;
  /** Gross price per kg rounded half up to the cent, as written (`12.35`). */
  grossPrice: string;
  /** The measurement time of the pricing reading (ISO 8601, UTC). */
  lastUpdated: string;
  greenShare: number | null;
  pressure: number;
}

export interface RefillPointModel {
  id: string;
  version: string;
  nozzle: string;
  dispenser: string;
  options: FuellingOption[];
  /** bar: the highest pressure of its fuelling options; null when it has none. */
  pressure: number | null;
  /** The renewable share of the one product it dispenses, when exactly one is mapped and declared. */
  renewableShare: number | null;
  /** The energy rates of the products it dispenses (ids). */
  rates: string[];
}

export interface StationModel {
  id: string;
  version: string;
  name: string;
  refuellingModes: string[];
  capacityPerDay: number;
  refillPoints: RefillPointModel[];
  rates: EnergyRateModel[];
}

export interface SiteModel {
  id: string;
  version: string;
  hrsId: string;
  name: string;
  /** The static record's last change (ISO 8601, UTC). */
  lastUpdated: string;
  operator: { id: string; name: string };
  owner: string | null;
  website: string | null;
  email: string | null;
  phone: string | null;
  directions: string | null;
  location: Coordinates;
  entrance: Coordinates | null;
  address: AddressModel | null;
  /** The zone's standard offset (`+01:00`): DATEX has an offset where the registry has a zone. */
  timeZoneOffset: string | null;
  nuts: { type: 'nuts1Code' | 'nuts2Code' | 'nuts3Code'; code: string } | null;
  openingHours: { osm: string; hours: DatexHours } | null;
  station: StationModel;
}

/** Why a station is not in the table: the profile requires both. */
export type LeftOutReason = 'no_capacity' | 'no_coordinates';

export type SiteResult = { site: SiteModel } | { leftOut: LeftOutReason[] };

/** The DATEX refuelling mode of each fuelling option. */
export const REFUELLING_MODES: Record<FuellingOption, string> = {
  '700ld': 'gaseousHydrogen700barCar',
  '350ld': 'gaseousHydrogen350barCar',
  '700hd': 'gaseousHydrogen700barTruck',
  '350hd': 'gaseousHydrogen350barTruck',
};

export const siteId = (hrsId: string) => hrsId;
export const stationId = (hrsId: string) => `${hrsId}-S`;
export const refillPointId = (hrsId: string, nozzle: string) => `${hrsId}-N-${nozzle}`;
export const energyRateId = (hrsId: string, product: string) => `${hrsId}-R-${product}`;

/** First 16 hex digits of the SHA-256 of the value's JSON: a version that moves with the content only. */
export function contentVersion(content: unknown): string {
  return createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16);
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 1024) : null);
const isOption = (value: string): value is FuellingOption => (FUELLING_OPTIONS as readonly string[]).includes(value);

/** Coordinates DATEX can carry: the registry's forms (src/domain/coordinates.ts), in range. */
function inRange(point: { lat: number; lon: number } | undefined): Coordinates | null {
  return point !== undefined && Math.abs(point.lat) <= 90 && Math.abs(point.lon) <= 180 ? { latitude: point.lat, longitude: point.lon } : null;
}

/** `cumulative_daily_hydrogen_capacity` (kg per day), when a number of 0 or more. */
export function capacityOf(details: Record<string, unknown>): number | null {
  const value = details.cumulative_daily_hydrogen_capacity;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * The address: `details.address` (a line of text, or `street`, `house_number`, `postal_code`, `city`,
 * `country`), else the same fields at the top level of the details (`postcode` too), as registries
 * often give them; the country falls back to `details.country`.
 */
function addressOf(details: Record<string, unknown>): AddressModel | null {
  const countryOf = (value: unknown) => {
    const given = text(value);
    return given !== null && /^[A-Za-z]{2}$/.test(given) ? given.toUpperCase() : undefined;
  };
  const given = details.address;
  if (typeof given === 'string') {
    const line = text(given);
    return line === null ? null : { countryCode: countryOf(details.country), lines: [{ type: 'generalTextLine', text: line }] };
  }
  const fields = isRecord(given) ? given : details;
  const lines: AddressModel['lines'] = [];
  const street = text(fields.street);
  const house = text(fields.house_number);
  if (street !== null) lines.push({ type: 'street', text: street });
  if (house !== null) lines.push({ type: 'houseNumber', text: house });
  const address: AddressModel = {
    postcode: text(fields.postal_code) ?? text(fields.postcode) ?? undefined,
    city: text(fields.city) ?? undefined,
    countryCode: countryOf(fields.country) ?? countryOf(details.country),
    lines,
  };
  return address.postcode === undefined && address.city === undefined && lines.length === 0 ? null : address;
}

/** The smaller of the zone's offsets in January and July: its standard time (`+01:00` for Europe/Berlin). */
export function standardOffset(timeZone: string | null): string | null {
  if (timeZone === null) return null;
  try {
    const offsetAt = (iso: string) => {
      const part = new Intl.DateTimeFormat('en-GB', { timeZone, timeZoneName: 'longOffset' })
        .formatToParts(new Date(iso))
        .find((p) => p.type === 'timeZoneName')?.value;
      const match = /GMT([+-])(\d{2}):(\d{2})/.exec(part ?? '');
      return match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
    };
    const minutes = Math.min(offsetAt('2026-01-15T12:00:00Z'), offsetAt('2026-07-15T12:00:00Z'));
    if (minutes === 0) return '+00:00';
    const abs = Math.abs(minutes);
    return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  } catch {
    return null;
  }
}

function nutsOf(details: Record<string, unknown>): SiteModel['nuts'] {
  const code = text(details.nuts_region);
  if (code === null || !/^[A-Z]{2}[A-Z0-9]{1,3}$/.test(code)) return null;
  const type = code.length === 3 ? 'nuts1Code' : code.length === 4 ? 'nuts2Code' : 'nuts3Code';
  return { type, code };
}

/** The energy rates of the latest pricing: one per registered product with a price, in the layout's order. */
function ratesOf(row: TableStationInput, pricing: PricingInput | null): EnergyRateModel[] {
  if (pricing === null || row.products === null) return [];
  const prices = new Map<string, Record<string, unknown>>();
  for (const p of pricing.products) if (typeof p.id === 'string' && !prices.has(p.id)) prices.set(p.id, p);
  const lastUpdated = new Date(pricing.datetime).toISOString();
  return row.products.flatMap((product) => {
    const price = prices.get(product.external_id);
    const gross = price && typeof price.gross_price === 'string' ? centsHalfUp(price.gross_price) : null;
    if (!price || gross === null) return [];
    return [{
      id: energyRateId(row.hrs_id, product.external_id),
      product: product.external_id,
      currency: typeof price.currency === 'string' ? price.currency : 'EUR',
      grossPrice: gross,
      lastUpdated,
      greenShare: product.green_hydrogen_share,
      pressure: product.pressure_stage,
    }];
  });
}

function refillPointsOf(row: TableStationInput, rates: readonly EnergyRateModel[]): RefillPointModel[] {
  const priced = new Set(rates.map((r) => r.product));
  return (row.dispensers ?? []).flatMap((dispenser) =>
    dispenser.nozzles.map((nozzle) => {
      const options = FUELLING_OPTIONS.filter((o) => nozzle.fuelling_options.includes(o));
      const pressures = options.map((o) => (o.startsWith('700') ? 700 : 350));
      const products = (row.products ?? []).filter((p) => p.nozzle_external_ids.includes(nozzle.external_id));
      const content = {
        id: refillPointId(row.hrs_id, nozzle.external_id),
        nozzle: nozzle.external_id,
        dispenser: dispenser.external_id,
        options,
        pressure: pressures.length === 0 ? null : Math.max(...pressures),
        renewableShare: products.length === 1 ? products[0]!.green_hydrogen_share : null,
        rates: products.filter((p) => priced.has(p.external_id)).map((p) => energyRateId(row.hrs_id, p.external_id)),
      };
      return { ...content, version: contentVersion(content) };
    }),
  );
}

/** The modes of every option the station provides (its layout's and its v1 fuel types'), in the fuel-type order. */
function refuellingModesOf(row: TableStationInput): string[] {
  const provided = new Set<FuellingOption>();
  for (const d of row.dispensers ?? []) for (const n of d.nozzles) for (const o of n.fuelling_options) if (isOption(o)) provided.add(o);
  for (const f of row.v1_fuel_types) {
    const option = V1_TO_CANONICAL.get(f);
    if (option !== undefined) provided.add(option);
  }
  const modes = FUELLING_OPTIONS.filter((o) => provided.has(o)).map((o) => REFUELLING_MODES[o]);
  // The profile requires at least one mode; a station that names none says so.
  return modes.length > 0 ? modes : ['unknown'];
}

/**
 * Why a station is left out of the table whatever its prices (the profile requires its daily capacity
 * and coordinates); empty when it is not.
 */
export function leftOutReasons(details: Record<string, unknown>): LeftOutReason[] {
  const missing: LeftOutReason[] = [];
  if (capacityOf(details) === null) missing.push('no_capacity');
  if (inRange(coordinatesOf(details)) === null) missing.push('no_coordinates');
  return missing;
}

/** One station's site, or why it is left out of the table. */
export function siteOf(row: TableStationInput, pricing: PricingInput | null): SiteResult {
  const location = inRange(coordinatesOf(row.details));
  const capacity = capacityOf(row.details);
  if (capacity === null || location === null) return { leftOut: leftOutReasons(row.details) };
  const rates = ratesOf(row, pricing);
  const stationContent = {
    id: stationId(row.hrs_id),
    name: row.name,
    refuellingModes: refuellingModesOf(row),
    capacityPerDay: capacity,
    refillPoints: refillPointsOf(row, rates),
    rates,
  };
  const station: StationModel = { ...stationContent, version: contentVersion(stationContent) };
  const contact = isRecord(row.details.contact) ? row.details.contact : {};
  const hours = row.opening_hours === null ? null : datexHours(row.opening_hours, holidayCountry(row.details.country));
  const siteContent = {
    id: siteId(row.hrs_id),
    hrsId: row.hrs_id,
    name: row.name,
    lastUpdated: new Date(Math.floor(row.modifiedUs / 1000)).toISOString(),
    operator: { id: row.operator_id, name: row.operator_name },
    owner: text(row.details.owner),
    website: text(contact.website),
    email: text(contact.email),
    phone: text(row.details.contact_phone_number),
    directions: text(row.details.location_directions),
    location,
    entrance: inRange(pointOf(row.details.entrance_coordinates)),
    address: addressOf(row.details),
    timeZoneOffset: standardOffset(row.time_zone),
    nuts: nutsOf(row.details),
    openingHours: hours === null ? null : { osm: row.opening_hours!, hours },
    station,
  };
  return { site: { ...siteContent, version: contentVersion(siteContent) } };
}

/** The table's own id; its version is the content version of every site's id and version. */
export const TABLE_ID = 'hrs-energy-infrastructure';

export function tableVersion(sites: readonly SiteModel[]): string {
  return contentVersion(sites.map((s) => [s.id, s.version]));
}

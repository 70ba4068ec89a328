/**
 * The webhook messages (Standard Webhooks): what a subscription wants of the change log, a change as a
 * receiver reads it, the bodies of `hrs.changes` and `webhook.ping` messages, their ids, and the
 * retry schedule. Pure: the delivery worker (workers/webhooks/) reads the log and sends.
 */

/** The kinds a subscription chooses from, and the change-log topic each follows. */
export const KIND_TOPICS = {
  station_records: 'station',
  events: 'event',
  station_status: 'status',
  fuelling_options: 'option',
} as const;
export type WebhookKind = keyof typeof KIND_TOPICS;
export type ChangeTopic = (typeof KIND_TOPICS)[WebhookKind];

/** At most this many changes in one message. */
export const MAX_CHANGES_PER_MESSAGE = 100;

/** The change-log topics the kinds follow (unknown kinds follow nothing). */
export function topicsOf(kinds: readonly string[]): ChangeTopic[] {
  return kinds.flatMap((k) => (k in KIND_TOPICS ? [KIND_TOPICS[k as WebhookKind]] : []));
}

/** A row of the change log as the worker reads it. */
export interface ChangeRow {
  seq: string;
  topic: string;
  hrs_id: string;
  change: string;
  at: Date;
  payload: Record<string, unknown> | null;
}

/** What a subscription receives besides its kinds: stations by id, and a box they stand in. */
export interface ChangeFilter {
  hrsIds: readonly string[] | null;
  /** minLon, minLat, maxLon, maxLat. */
  bbox: readonly number[] | null;
}

/**
 * Whether a change passes a subscription's filters (its topic already chosen): a station listed (or
 * no list), and standing in the box (or no box). A station without coordinates never matches a box;
 * a station's removal always passes one, since its place is gone.
 */
export function passes(row: Pick<ChangeRow, 'topic' | 'hrs_id' | 'change'>, filter: ChangeFilter, pointOf: (hrsId: string) => { lat: number; lon: number } | null | undefined): boolean {
  if (filter.hrsIds !== null && !filter.hrsIds.includes(row.hrs_id)) return false;
  if (filter.bbox === null) return true;
  if (row.topic === 'station' && row.change === 'deleted') return true;
  const point = pointOf(row.hrs_id);
  if (!point) return false;
  const [minLon, minLat, maxLon, maxLat] = filter.bbox as [number, number, number, number];
  return point.lon >= minLon && point.lon <= maxLon && point.lat >= minLat && point.lat <= maxLat;
}

/** A change as a message carries it: seq, type, hrs_id, at, then what its type says. */
export type Change = { seq: string; type: string; hrs_id: string; at: string } & Record<string, unknown>;

const STATUS_FIELDS = ['category', 'freshness', 'status'];
const OPTION_FIELDS = ['fuelling_option', 'status', 'reason', 'datetime'];

/** A payload's fields in the documented order (jsonb keeps its own), any others after them. */
function ordered(payload: Record<string, unknown> | null, first: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!payload) return out;
  for (const key of first) if (key in payload) out[key] = payload[key];
  for (const [key, value] of Object.entries(payload)) if (!(key in out)) out[key] = value;
  return out;
}

/** The change a log row tells of; `baseUrl` makes a station's record URL. */
export function changeOf(row: ChangeRow, baseUrl: string): Change {
  const common = { seq: String(row.seq), hrs_id: row.hrs_id, at: row.at.toISOString() };
  switch (row.topic) {
    case 'station':
      return row.change === 'deleted'
        ? { seq: common.seq, type: 'station.deleted', hrs_id: common.hrs_id, at: common.at }
        : { seq: common.seq, type: `station.${row.change}`, hrs_id: common.hrs_id, at: common.at, record_url: `${baseUrl}/v2/hrs/${encodeURIComponent(row.hrs_id)}` };
    case 'event':
      return { seq: common.seq, type: `event.${row.change}`, hrs_id: common.hrs_id, at: common.at, event: row.payload };
    case 'status':
      return { seq: common.seq, type: 'status.changed', hrs_id: common.hrs_id, at: common.at, ...ordered(row.payload, STATUS_FIELDS) };
    case 'option':
      return { seq: common.seq, type: 'fuelling_option.changed', hrs_id: common.hrs_id, at: common.at, ...ordered(row.payload, OPTION_FIELDS) };
    default:
      throw new Error(`change log row ${row.seq} has an unknown topic ${row.topic}`);
  }
}

/** The webhook-id of a message of changes: the same for every attempt to deliver it. */
export function changesMessageId(subscriptionId: string, firstSeq: string, lastSeq: string): string {
  return `msg_${subscriptionId}_${firstSeq}_${lastSeq}`;
}

/**
 * A log row as a worker keeps it (workers/webhooks/row-cache.ts): what a subscription's filters read
 * (topic, station, change) and its change written as JSON once, its payload and dates let go. One
 * written change serves every subscription that wants the row, and a kept row (a worker keeps up to
 * 20,000) holds that string and four short ones, not also the parsed payload, the change made of it
 * and their dates.
 */
export interface WrittenChange {
  seq: string;
  topic: string;
  hrs_id: string;
  change: string;
  /** The change's time, as the message writes it (ISO 8601). */
  at: string;
  /** The change as a message carries it (changeOf), as JSON.stringify writes it. */
  json: string;
}

/** A log row's change written once; `baseUrl` makes a station's record URL. */
export function writtenChange(row: ChangeRow, baseUrl: string): WrittenChange {
  const change = changeOf(row, baseUrl);
  return { seq: change.seq, topic: row.topic, hrs_id: row.hrs_id, change: row.change, at: change.at, json: JSON.stringify(change) };
}

/**
 * The body of a message of changes (formed once, resent as it is): what `JSON.stringify({ type,
 * timestamp, data: { subscription_id, changes } })` writes, from each change's JSON written once.
 */
export function changesBody(subscriptionId: string, changes: readonly Pick<WrittenChange, 'json'>[], at: Date): string {
  let list = '';
  for (let i = 0; i < changes.length; i++) list += (i === 0 ? '' : ',') + changes[i]!.json;
  return `{"type":"hrs.changes","timestamp":${JSON.stringify(at.toISOString())},"data":{"subscription_id":${JSON.stringify(subscriptionId)},"changes":[${list}]}}`;
}

/** The body of a ping. */
export function pingBody(subscriptionId: string, at: Date): string {
  return JSON.stringify({ type: 'webhook.ping', timestamp: at.toISOString(), data: { subscription_id: subscriptionId } });
}

/** The retry schedule: exponential from `baseMs`, at most `capMs`, with full jitter. */
export interface Backoff {
  baseMs: number;
  capMs: number;
}

/** Retries wait 5 s, 10 s, 20 s … up to 10 minutes (each a random share of it: full jitter). */
export const DEFAULT_BACKOFF: Backoff = { baseMs: 5000, capMs: 10 * 60_000 };

/** How long to wait before attempt `attempt + 1`, after `attempt` failed ones (full jitter: uniform in [0, ceiling]). */
export function retryDelayMs(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.floor(random() * ceiling);
}

import { ALL, CATEGORIES as CATEGORY_NAMES } from './categories/index.js';
import { CONNECTOR_TYPES, VEHICLE_SIDES } from './portal/nozzle-vocabulary.js';
import { SUMMARY_REASONS, SUMMARY_STATES } from './status/summary.js';
import { STATION_STATE_KEYS } from './status/verdict.js';
import { TOKEN_EVENT_KINDS, type TokenEventKind } from './token-events.js';
import { EVENT_KINDS, FUELLING_OPTIONS, GENERATIONS, V1_FUEL_TYPES, VEHICLE_CATEGORIES, type Generation } from './vocabulary.js';
import { MAX_WEBHOOKS, newWebhookSchema, WEBHOOK_KINDS, type WebhookKind } from './webhooks/schemas.js';

/**
 * The words the browser pages show that the platform owns: category names and labels, fuelling options,
 * the five states and their reasons, webhook kinds, fields and limit, token events and kinds, layout values.
 * Each page's routes serve them as one ES module, `vocabulary.js` (src/http/page-files.ts), so no page
 * script keeps a copy of its own: a category, kind or state added here reaches every page.
 */

/** Each category: its name (import path), its key (status object, feeds) and its label. */
const CATEGORIES = ALL.map((d) => ({ name: d.name, key: d.sectionKey, label: d.label }));

/** The kinds of change a webhook subscription may want, in the words the portal's form shows. */
const WEBHOOK_KIND_WORDS = {
  station_status: { label: 'Station status', help: 'availability, usage, hydrogen storage and prices, as the export API shows them' },
  fuelling_options: { label: 'Fuelling options', help: 'whether each way of fuelling can be used now, and why not' },
  station_records: { label: 'Station records', help: 'stations added, changed or removed' },
  events: { label: 'Events', help: 'maintenance, closures and openings announced by operators' },
} as const satisfies Record<WebhookKind, { label: string; help: string }>;

/** What happened to a personal token, as the admins' tail says it. */
const TOKEN_EVENT_WORDS = {
  created: 'created',
  expiry_changed: 'expiry changed',
  revoked: 'revoked',
  expiring: 'expiring',
} as const satisfies Record<TokenEventKind, string>;

/** A token's kind (its generation), as the admins' panel of expiring tokens says it. */
const TOKEN_KIND_WORDS = {
  import_v2: 'import v2',
  import_v1: 'import v1 / v1.1',
  export_v1: 'export v1 (legacy)',
  export_v2: 'personal (export v2)',
} as const satisfies Record<Generation, string>;

/** An originator's health on the admins' dashboard (src/api/admin/originators.ts decides it). */
const ORIGINATOR_HEALTH_WORDS = { refused: 'last call refused', silent: 'silent', never_seen: 'never seen', ok: 'ok' } as const;

/**
 * A station's state on the admins' dashboard (from its verdict, src/domain/status/verdict.ts), in the
 * order its rows go: problems first, then the usable, then the closed.
 */
const STATION_STATE_WORDS = { unavailable: 'unavailable', unknown: 'unknown', limited: 'limitedly available', available: 'available', closed: 'closed' } as const;

/** The module every page gets: one constant each, in the names its scripts import. */
export const PAGE_WORDS = {
  CATEGORIES,
  /** What an originator may be assigned to report for a station: the categories and v1. */
  SIGNAL_TYPES: [...CATEGORY_NAMES, 'v1'],
  FUELLING_OPTIONS,
  V1_FUEL_TYPES,
  /** The EU vehicle categories a station's record may name (`details.vehicle_types`). */
  VEHICLE_CATEGORIES,
  SUMMARY_STATES,
  SUMMARY_REASONS,
  CONNECTOR_TYPES,
  VEHICLE_SIDES,
  EVENT_KINDS,
  WEBHOOK_KINDS: WEBHOOK_KINDS.map((value) => ({ value, ...WEBHOOK_KIND_WORDS[value] })),
  /** A new subscription's fields, in the order of the API's body (the form says each field's problem beside it). */
  WEBHOOK_FIELDS: Object.keys(newWebhookSchema.shape),
  /** Subscriptions an account may have besides the unsubscribed ones (the API's limit). */
  WEBHOOK_LIMIT: MAX_WEBHOOKS,
  TOKEN_EVENT_WORDS: Object.fromEntries(TOKEN_EVENT_KINDS.map((kind) => [kind, TOKEN_EVENT_WORDS[kind]])),
  TOKEN_KIND_WORDS: Object.fromEntries(GENERATIONS.map((kind) => [kind, TOKEN_KIND_WORDS[kind]])),
  ORIGINATOR_HEALTH_WORDS,
  STATION_STATE_WORDS,
  /** A verdict's `status` → the dashboard's state key (STATION_STATE_WORDS). */
  STATION_STATE_KEYS,
};

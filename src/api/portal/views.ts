import { summaryStateSchema } from '../../domain/status/summary.js';
import { z } from 'zod';
import { boundedString } from '../../domain/text.js';
import { CALL_LOG_MODES, GENERATIONS } from '../../domain/vocabulary.js';
import { eventSchema, layoutSchema } from '../../registry/file/schema.js';
import { namedSchema } from '../../domain/portal/schemas.js';

export { namedSchema, rolesSchema } from '../../domain/portal/schemas.js';

/**
 * The response bodies of the operator and originator portal (src/api/portal/stations.ts and
 * originators.ts) and of the admin routes beside it, as strict zod schemas: the OpenAPI document
 * (./docs/) is generated from them, and the tests check real responses against
 * them, so a field a handler adds without documenting it fails. Layouts and events are the registry
 * file's own schemas.
 */

const instant = () => z.iso.datetime({ offset: true });
const at = '2027-03-01T12:00:00.000Z';

/** Drivers waiting, by what they wait for. */
const waitingCountsSchema = z.strictObject({
  available: z.int().min(0).meta({ description: 'Alerts waiting for an option to be available again.' }),
  unavailable: z.int().min(0).meta({ description: 'Alerts waiting for an option to go down (drivers who rely on it).' }),
});

/** `GET /portal/v1/stations/{hrs_id}/drivers-waiting`: the counts per fuelling option. */
export const driversWaitingSchema = z
  .strictObject({
    hrs_id: z.string(),
    fuelling_options: z.array(z.strictObject({ fuelling_option: z.string(), ...waitingCountsSchema.shape })).meta({ description: 'Each option with at least one alert, by code.' }),
  })
  .meta({
    title: 'Drivers waiting',
    description: 'How many drivers\' confirmed alerts wait on each fuelling option of the station: counts only, never an address (docs/alerts.md).',
    examples: [{ hrs_id: 'BERAP', fuelling_options: [{ fuelling_option: '700ld', available: 3, unavailable: 1 }] }],
  });

export const stationListSchema = z
  .strictObject({
    stations: z.array(
      z.strictObject({
        hrs_id: z.string(),
        name: z.string(),
        operator: z.string(),
        static_modified_at: instant().meta({ description: 'When anything exported about the station as static content last changed.' }),
        layout_version: z.number().int().nullable().meta({ description: 'The confirmed layout\'s version; null: none.' }),
        has_draft: z.boolean(),
        has_photo: z.boolean(),
        status: summaryStateSchema.nullable().meta({
          description: 'The station\'s verdict now, as every face shows it (the best of its fuelling options: export v2\'s `fuelling_options`); null while the instance has not loaded the station.',
        }),
        hint: z.string().nullable().meta({ description: 'What needs looking at, in words (no confirmed layout, no reading for 30 minutes, maintenance…); null: nothing.' }),
        drivers_waiting: waitingCountsSchema.meta({ description: 'Drivers whose confirmed alerts wait on the station\'s fuelling options (all options together): counts, never addresses.' }),
      }),
    ),
  })
  .meta({
    title: 'Station list',
    description: 'The stations of the account\'s operators (every station for an admin), by id.',
    examples: [
      {
        stations: [
          { hrs_id: 'BERAP', name: 'Berlin Airport', operator: 'h2-demo', static_modified_at: at, layout_version: 2, has_draft: true, has_photo: false, status: 'UNKNOWN', hint: 'no availability reading for 30 minutes or more', drivers_waiting: { available: 3, unavailable: 1 } },
        ],
      },
    ],
  });

export const photoInfoSchema = z
  .strictObject({
    media_type: z.enum(['image/jpeg', 'image/png', 'image/webp']),
    bytes: z.number().int().min(1),
    sha256: boundedString(64, 'must be 64 lowercase hexadecimal digits').regex(/^[0-9a-f]{64}$/),
  })
  .meta({ title: 'Photo', description: 'The stored photo: its media type (told from its bytes), size and SHA-256.' });

export const stationRecordViewSchema = z
  .strictObject({
    hrs_id: z.string(),
    operator: z.string(),
    name: z.string(),
    heavy_duty: z.boolean(),
    opening_hours: z.string().nullable(),
    time_zone: z.string().nullable().meta({ description: 'The zone the opening hours are read in: the one set, else the one at the coordinates.' }),
    details: z.record(z.string(), z.unknown()).meta({ description: 'The AFIR static dataset, as stored.' }),
    v1_fuel_types: z.array(z.string()),
    photo: photoInfoSchema.nullable(),
    static_modified_at: instant(),
  })
  .meta({
    title: 'Station record',
    description: 'The station\'s record as the portal edits it: `PUT` takes it back (its read-only `hrs_id`, `operator`, `photo` and `static_modified_at` checked, never written).',
    examples: [
      {
        hrs_id: 'BERLA', operator: 'h2-demo', name: 'Berlin Airport', heavy_duty: false, opening_hours: '24/7', time_zone: 'Europe/Berlin',
        details: { city: 'Berlin', vehicle_types: ['M1'] }, v1_fuel_types: ['700car'], photo: null, static_modified_at: at,
      },
    ],
  });

export const storedLayoutSchema = z
  .strictObject({
    version: z.number().int().min(1).meta({ description: 'Confirmed: its version; draft: the version its confirmation would get.' }),
    created_at: instant(),
    confirmed_at: instant().nullable(),
    layout: layoutSchema,
  })
  .meta({ title: 'Stored layout', description: 'A confirmed layout or a draft, as stored.' });

const fieldChange = z.strictObject({ field: z.string(), before: z.unknown(), after: z.unknown() });
const partDiff = z.strictObject({
  added: z.array(z.string()).meta({ description: 'Ids only the draft has.' }),
  removed: z.array(z.string()).meta({ description: 'Ids only the confirmed layout has.' }),
  changed: z.array(z.strictObject({ id: z.string(), changes: z.array(fieldChange) })).meta({ description: 'Ids in both whose fields differ, each field before and after.' }),
});

export const layoutDiffSchema = z
  .strictObject({
    unchanged: z.boolean().meta({ description: 'True when confirming would change nothing.' }),
    dispensers: partDiff,
    nozzles: partDiff,
    storages: partDiff,
    products: partDiff,
  })
  .meta({
    title: 'Layout diff',
    description: 'What confirming the draft would change. A nozzle moved to another dispenser is a changed `dispenser`; order alone changes nothing.',
    examples: [
      {
        unchanged: false,
        dispensers: { added: [], removed: [], changed: [] },
        nozzles: { added: ['N3'], removed: [], changed: [{ id: 'N2', changes: [{ field: 'is_certified', before: false, after: true }] }] },
        storages: { added: [], removed: [], changed: [] },
        products: { added: [], removed: ['P350'], changed: [] },
      },
    ],
  });

export const layoutsSchema = z
  .strictObject({ confirmed: storedLayoutSchema.nullable(), draft: storedLayoutSchema.nullable() })
  .meta({ title: 'Layouts', description: 'The confirmed layout and the draft; either may be null.' });

export const fuelTypesCheckSchema = z
  .strictObject({
    current: z.array(z.string()).meta({ description: 'The station\'s v1 fuel types now.' }),
    contradictions: z.array(z.string()).meta({ description: 'Where the draft and the current v1 fuel types disagree, one sentence each; empty when they agree.' }),
    agreeing: z.array(z.string()).nullable().meta({
      description: 'The v1 fuel types that agree with the draft, to send as `v1_fuel_types` with the confirmation; null when the current ones agree.',
    }),
    add: z.array(z.string()).meta({ description: 'What `agreeing` adds to the current v1 fuel types.' }),
    remove: z.array(z.string()).meta({ description: 'What `agreeing` removes from them.' }),
  })
  .meta({
    title: 'v1 fuel types against the draft',
    description:
      'The v1 fuel types and the confirmed layout must describe the same fuelling options (every v1 fuel type has a nozzle offering its ' +
      'option; every option with a v1 code is among the v1 fuel types; an empty side is not compared). A draft that adds the first nozzle ' +
      'of an option, or removes the last one, is confirmed together with `agreeing`.',
    examples: [{ current: ['700car'], contradictions: ['fuelling option 350ld on the draft layout is missing from the v1 fuel types (350car)'], agreeing: ['700car', '350car'], add: ['350car'], remove: [] }],
  });

export const draftSavedSchema = z
  .strictObject({ draft: storedLayoutSchema, diff: layoutDiffSchema, v1_fuel_types: fuelTypesCheckSchema })
  .meta({ title: 'Draft saved', description: 'The draft as stored, what confirming it would change, and whether the v1 fuel types agree with it.' });

export const diffAnswerSchema = z
  .strictObject({ diff: layoutDiffSchema, v1_fuel_types: fuelTypesCheckSchema })
  .meta({ title: 'Diff', description: 'What confirming the draft would change, and whether the v1 fuel types agree with it.' });

export const confirmedSchema = z
  .strictObject({ confirmed: storedLayoutSchema, diff: layoutDiffSchema })
  .meta({ title: 'Confirmed', description: 'The new confirmed layout (its version one more), and what the confirmation changed.' });

export const eventViewSchema = eventSchema.meta({ title: 'Event', description: 'A station event, as the registry file describes one.' });

export const eventListSchema = z
  .strictObject({ events: z.array(eventViewSchema) })
  .meta({ title: 'Event list', description: 'Every event of the station, past ones too, latest start first.' });

export const broadcastAnswerSchema = z
  .strictObject({ id: z.string(), hrs_ids: z.array(z.string()), event: eventViewSchema })
  .meta({ title: 'Broadcast', description: 'The event, and the stations that got it (all the request named, or all the operator\'s).' });

export const photoAnswerSchema = z.strictObject({ photo: photoInfoSchema.nullable() }).meta({ title: 'Photo answer', description: 'The photo as stored now.' });

export const assignmentsSchema = z
  .strictObject({
    assignments: z.array(z.strictObject({ originator: z.string(), signal_type: z.string(), state: z.string(), updated_at: instant() })),
    originators: z.array(namedSchema).meta({ description: 'Every originator that may be assigned.' }),
    signal_types: z.array(z.string()).meta({ description: 'The signal types (`v1`: the legacy transmission state).' }),
  })
  .meta({ title: 'Assignments', description: 'The station\'s assignments, and what may be assigned.' });

export const assignmentAnswerSchema = z
  .strictObject({ hrs_id: z.string(), originator: z.string(), signal_type: z.string(), state: z.enum(['live', 'testing', 'inactive', 'none']) })
  .meta({ title: 'Assignment', description: 'The assignment as it is now (`none`: not assigned).', examples: [{ hrs_id: 'BERLA', originator: 'mon-1', signal_type: 'pricing', state: 'live' }] });

export const auditEntrySchema = z
  .strictObject({
    id: z.string(),
    at: instant(),
    actor: z.string().meta({ description: '`user:<id>` for a portal account, `admin-token` for the admin API.' }),
    via: z.enum(['portal', 'admin']),
    action: z.string().meta({ description: '`station.update`, `layout.draft`, `layout.confirm`, `event.create`, `event.broadcast`, `photo.set`, `assignment.set`, `token.create`, `token.revoke`, `user.roles`, …' }),
    operator_id: z.string().nullable(),
    hrs_id: z.string().nullable(),
    originator_id: z.string().nullable(),
    subject: z.string().nullable().meta({ description: 'What else the change is about: an event id, a token id, an account.' }),
    before: z.unknown(),
    after: z.unknown(),
  })
  .meta({ title: 'Audit entry', description: 'One change: who, when, what, before and after.' });

const next = z.string().nullable().meta({ description: 'The path of the next page, or null on the last.' });

export const auditPageSchema = z
  .strictObject({ entries: z.array(auditEntrySchema), next })
  .meta({ title: 'Audit page', description: 'Audit entries, newest first.' });

export const originatorListSchema = z.strictObject({ originators: z.array(namedSchema) }).meta({ title: 'Originator list', description: 'The originators the account manages (every one for an admin).' });

export const originatorViewSchema = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    call_log_mode: z.enum(CALL_LOG_MODES),
    stations: z.array(z.strictObject({ hrs_id: z.string(), name: z.string(), assignments: z.record(z.string(), z.string()) })),
  })
  .meta({
    title: 'Originator',
    description: 'The originator, and the stations it reports on with its state per signal type.',
    examples: [{ id: 'mon-1', name: 'Monitoring One', call_log_mode: 'errors', stations: [{ hrs_id: 'BERLA', name: 'Berlin Airport', assignments: { availability: 'live', pricing: 'testing' } }] }],
  });

export const importTokenSchema = z
  .strictObject({
    id: z.string(),
    generation: z.enum(GENERATIONS.filter((g) => g.startsWith('import_')) as ['import_v1', 'import_v2']),
    name: z.string(),
    hint: z.string().nullable().meta({ description: 'The value\'s last four characters (null for tokens loaded from a registry file).' }),
    created_at: instant(),
    created_by: z.string().nullable().meta({ description: 'The account that made it in the portal.' }),
    expires_at: instant().nullable(),
    last_used_at: instant().nullable(),
    revoked_at: instant().nullable(),
    state: z.enum(['active', 'expired', 'revoked']),
  })
  .meta({ title: 'Import token', description: 'An import token of the originator: never its value.' });

export const importTokenListSchema = z
  .strictObject({
    tokens: z.array(importTokenSchema),
    limits: z.strictObject({ max_active: z.number().int(), default_days: z.number().int(), min_days: z.number().int(), max_days: z.number().int() }),
  })
  .meta({ title: 'Import token list', description: 'The originator\'s import tokens, newest first, and the limits.' });

export const createdImportTokenSchema = z
  .strictObject({
    token: importTokenSchema,
    value: z.string().regex(/^hrs_imp[12]_[0-9A-Za-z]{49}$/).meta({ description: 'The value, shown this once: it is stored as its SHA-256 only.' }),
  })
  .meta({ title: 'Created import token', description: 'The new token and its value (once).' });

export const importTokenAnswerSchema = z.strictObject({ token: importTokenSchema }).meta({ title: 'Import token answer', description: 'The token as it is now.' });

export const callLogPageSchema = z
  .strictObject({
    call_logs: z.array(
      z.strictObject({
        id: z.string(),
        originator: z.string(),
        request_time: instant(),
        endpoint: z.string(),
        station_ids: z.array(z.string()),
        status: z.number().int(),
        request_body: z.string(),
        response_body: z.string().nullable(),
        error_details: z.unknown(),
        request_id: z.string(),
        /** The client's address (behind a proxy in TRUST_PROXY, the one it forwarded); null in entries older than it. */
        client_address: z.string().nullable(),
        error: z
          .strictObject({
            path: z.string().meta({ description: 'Where it points in the request body (`[0].nozzles[1].id`); empty for the whole request.' }),
            message: z.string().meta({ description: 'The message, as the answer gave it (at most 300 characters).' }),
          })
          .nullable()
          .meta({ description: 'A refused call: the first error of its answer and where it points; null for an accepted call.' }),
      }),
    ),
    next,
  })
  .meta({ title: 'Call log page', description: 'The originator\'s API calls as its call-log mode kept them, newest first.' });

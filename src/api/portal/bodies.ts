import { z } from 'zod';
import { uniqueItems } from '../../domain/lists.js';
import { HRS_ID_PATTERN } from '../../domain/vocabulary.js';
import { BLANK_NAME, boundedDateTime, boundedString, storedName } from '../../domain/text.js';
import { eventPatchSchema, eventShape, checkEvent, checkStationRecord, layoutSchema, newEventSchema, stationRecordSchema, stationRecordShape } from '../../registry/file/schema.js';
import { photoInfoSchema } from './views.js';

/**
 * The request bodies of the operator and originator portal (`/portal/v1/stations/...`,
 * `/portal/v1/operators/...`, `/portal/v1/originators/...`) and of the admin routes beside it. Station
 * records, layouts and events are the registry file's own schemas (src/registry/file/schema.ts): a
 * station edited in the portal is refused for what a registry file would be refused for, with the same
 * message.
 */

export { stationRecordSchema, layoutSchema as draftLayoutSchema, newEventSchema, eventPatchSchema };

const isoDatetime = boundedDateTime('must be an ISO 8601 date-time with a UTC offset');

/**
 * The fields `GET /portal/v1/stations/{hrs_id}` shows beside the record, which its `PUT` takes back so
 * that a GET-modify-PUT round trip works: each is ignored when it equals what `GET` shows now, a 400
 * `read_only` when it would change it, and `static_modified_at` makes the `PUT` conditional (409).
 */
export const stationReadOnlyShape = {
  hrs_id: boundedString(64).optional().meta({ description: 'Read-only: may be sent back as `GET` gave it; another id is a 400 `read_only`.' }),
  operator: boundedString(64).optional().meta({
    description: 'Read-only: may be sent back as `GET` gave it; another operator is a 400 `read_only` (admins move a station with a registry file).',
  }),
  photo: photoInfoSchema.nullable().optional().meta({
    description: 'Read-only: may be sent back as `GET` gave it; another value is a 400 `read_only` (the photo has its own `PUT` and `DELETE` on `…/photo`).',
  }),
  static_modified_at: isoDatetime.optional().meta({
    description:
      'Read-only: sent back as `GET` gave it, it makes the change conditional: if the station changed since (its record, layout, ' +
      'events or photo), the answer is a 409 `version_conflict` and nothing is changed. Left out: the change is made whatever happened meanwhile.',
  }),
};

/** The body of `PUT /portal/v1/stations/{hrs_id}`: the record (the registry file's schema and rules) and, optionally, the read-only fields as `GET` shows them. */
export const stationPutSchema = z
  .strictObject({ ...stationRecordShape, ...stationReadOnlyShape })
  .superRefine(checkStationRecord)
  .meta({
    title: 'Station record (PUT)',
    description:
      'The record as the registry file carries it. The body of `GET` may be sent back whole, changed where wanted: `hrs_id`, `operator`, ' +
      '`photo` and `static_modified_at` are read-only and checked against the station, never written.',
  });

export const endEventSchema = z.strictObject({
  ends_at: isoDatetime.optional().meta({ description: 'When the event ends; left out, now. It must lie after the event\'s start.' }),
});

export const broadcastSchema = z
  .strictObject({
    ...eventShape,
    id: eventShape.id.optional(),
    hrs_ids: uniqueItems(
      z
        .array(boundedString(5, 'must be exactly five uppercase letters (^[A-Z]{5}$)').regex(HRS_ID_PATTERN, 'must be exactly five uppercase letters (^[A-Z]{5}$)'))
        .min(1, 'must name at least one station')
        .max(10_000),
      'station',
    )
      .optional()
      .meta({ description: 'The stations; left out, every station of the operator.' }),
  })
  .superRefine(checkEvent);

export const confirmSchema = z.strictObject({
  expected_version: z
    .number()
    .int('must be a whole number')
    .min(0, 'must not be negative')
    .optional()
    .meta({ description: 'The confirmed layout\'s version the change was reviewed against (0: none); another one is a 409.' }),
  v1_fuel_types: stationRecordShape.v1_fuel_types.unwrap().optional().meta({
    description:
      'The station\'s v1 fuel types from this confirmation on, written in the same transaction as the layout (the diff\'s ' +
      '`v1_fuel_types.agreeing` when the draft adds or removes the last nozzle of a fuelling option). They must agree with the draft ' +
      '(422 otherwise, and nothing is changed). Left out, the v1 fuel types stay as they are and the draft must agree with them.',
    examples: [['700car', '350car']],
  }),
});

export const ASSIGNMENT_REQUEST_STATES = ['live', 'testing', 'inactive', 'none'] as const;

export const assignmentRequestSchema = z.strictObject({
  state: z.enum(ASSIGNMENT_REQUEST_STATES, { error: `must be one of ${ASSIGNMENT_REQUEST_STATES.join(', ')}` }).meta({
    description: '`live`, `testing` or `none` (not assigned) for a v2 signal type; for `v1`, the transmission state `live`, `testing` or `inactive`, or `none`.',
  }),
});

export const newImportTokenSchema = z.strictObject({
  generation: z.enum(['import_v2', 'import_v1'], { error: 'must be import_v2 or import_v1 (import v1 and v1.1 share their tokens)' }),
  name: storedName(boundedString(100).trim().min(1, BLANK_NAME)),
  expires_at: isoDatetime.optional(),
});


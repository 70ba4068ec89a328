import { MAX_PHOTO_BYTES, MAX_PHOTO_PIXELS, MAX_PHOTO_SIDE } from '../../../registry/file/photo.js';
import { assignmentRequestSchema, broadcastSchema, confirmSchema, draftLayoutSchema, endEventSchema, eventPatchSchema, newEventSchema, stationPutSchema } from '../bodies.js';
import { textProblem } from '../../../domain/text.js';
import {
  assignmentAnswerSchema,
  assignmentsSchema,
  auditPageSchema,
  broadcastAnswerSchema,
  confirmedSchema,
  diffAnswerSchema,
  draftSavedSchema,
  eventListSchema,
  eventViewSchema,
  layoutsSchema,
  photoAnswerSchema,
  stationListSchema,
  driversWaitingSchema,
  stationRecordViewSchema,
} from '../views.js';
import { badPage, noStation, notFound, registryOperation } from './registry-shared.js';
import { invalidBody, problem, problemExample } from './shared.js';

/**
 * Operator staff's operations: stations, layouts, events and the broadcast, the photo, assignments, the audit trail.
 * Each is one registryOperation call, so they look alike (every operation states a method, a tag, a role,
 * words, a body and its answers), but no two share their values: a table or a loop over them would hold
 * the same rows, one step further from the operations they describe. What they do share is a helper
 * (noStation, problem, invalidBody).
 */

const noEvent = () => notFound('No such station, or it has no event with this id.', 'BERLA has no event "ev-9".');
const record = { name: 'Berlin Airport', heavy_duty: false, opening_hours: '24/7', time_zone: null, details: { city: 'Berlin' }, v1_fuel_types: ['700car'] };
const layout = {
  dispensers: [{ external_id: 'D1', is_certified: true, nozzles: [{ external_id: 'N1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] }],
  storages: [],
  products: [{ external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1'] }],
};
const contradiction = () =>
  problem('The v1 fuel types and the (confirmed) layout would describe different fuelling options: nothing was changed.', {
    contradiction: problemExample(422, 'layout_contradiction', 'v1_fuel_types: v1 fuel type 350car has no nozzle with fuelling option 350ld on the confirmed layout'),
  });

export function stationDocs() {
  return {
    listStations: registryOperation({
      method: 'GET', tag: 'Stations', id: 'listStations', role: 'station',
      summary: 'The account\'s stations',
      description: 'The stations of the operators whose staff the account is (every station for an admin), with their layout version and whether a draft and a photo exist.',
      ok: { status: '200', description: 'The stations.', schema: 'StationList', zod: stationListSchema },
    }),
    driversWaiting: registryOperation({
      method: 'GET', tag: 'Stations', id: 'getDriversWaiting', role: 'station',
      summary: 'How many drivers wait on each fuelling option',
      description: 'Counts of the confirmed driver alerts on each of the station\'s fuelling options: waiting for it to be available again, and for it to go down. Never an address.',
      ok: { status: '200', description: 'The counts.', schema: 'DriversWaiting', zod: driversWaitingSchema },
      more: { '404': noStation() },
    }),
    getStation: registryOperation({
      method: 'GET', tag: 'Stations', id: 'getStation', role: 'station',
      summary: 'A station\'s record',
      description: 'The record as the registry file carries it, with the photo\'s metadata and when the exported static content last changed.',
      ok: { status: '200', description: 'The record.', schema: 'StationRecordView', zod: stationRecordViewSchema },
      more: { '404': noStation() },
    }),
    putStation: registryOperation({
      method: 'PUT', tag: 'Stations', id: 'putStation', role: 'station',
      summary: 'Change a station\'s record',
      description:
        'The record becomes the body, checked by the registry file\'s own schema (the same rules and messages as `hrs load`); a ' +
        'left-out `time_zone` is the zone at the coordinates of `details`. The export record\'s `Last-Modified` moves when anything changed. ' +
        '**Round trip**: the body of `GET` may be sent back whole, changed where wanted. Its read-only fields (`hrs_id`, `operator`, ' +
        '`photo`, `static_modified_at`) are never written: each is ignored when it equals what `GET` shows now, and one that would change ' +
        'is a 400 `read_only` naming it. `static_modified_at` sent back makes the change conditional: a station changed since it was read ' +
        '(record, layout, events or photo) is a 409 `version_conflict`, and nothing is changed. No string may hold U+0000 or an unpaired ' +
        'surrogate, and `name` may not be blank.',
      body: {
        schema: 'StationRecord', zod: stationPutSchema,
        invalid: {
          hours: invalidBody(stationPutSchema, { ...record, opening_hours: 'Mo-Fr 25:00' }, 'Opening hours the parser refuses'),
          unknown_field: invalidBody(stationPutSchema, { ...record, colour: 'green' }, 'A field the record does not have'),
          blank_name: invalidBody(stationPutSchema, { ...record, name: '   ' }, 'A name made only of spaces'),
          nul: problemExample(400, 'invalid_body', `details.city: ${textProblem('\u0000')}`, 'A NUL character in any string (or an unpaired surrogate)'),
          read_only: problemExample(400, 'read_only', 'operator: read-only: the station belongs to "h2-demo" (an admin moves a station to another operator with a registry file). Nothing was changed.', 'A read-only field that would change'),
        },
      },
      ok: { status: '200', description: 'The record as stored now.', schema: 'StationRecordView', zod: stationRecordViewSchema },
      more: {
        '404': noStation(),
        '409': problem('`static_modified_at` was sent and the station changed since: nothing was changed.', {
          version: problemExample(409, 'version_conflict', 'BERLA changed at 2027-03-01T12:05:00.000Z, after the copy sent (static_modified_at 2027-03-01T12:00:00.000Z): nothing was changed. Read it again, redo the change and send it.'),
        }),
        '422': contradiction(),
      },
    }),
    getLayouts: registryOperation({
      method: 'GET', tag: 'Layouts', id: 'getLayouts', role: 'station',
      summary: 'The confirmed layout and the draft',
      description: 'The confirmed layout (what signals are checked against and export shows) and the draft (invisible to both until confirmed).',
      ok: { status: '200', description: 'Both layouts; either may be null.', schema: 'Layouts', zod: layoutsSchema },
      more: { '404': noStation() },
    }),
    putDraft: registryOperation({
      method: 'PUT', tag: 'Layouts', id: 'putDraft', role: 'station',
      summary: 'Save the draft layout',
      description: 'The draft becomes the body, whole (the registry file\'s layout schema). It stays invisible to import and export until confirmed.',
      body: {
        schema: 'DraftLayout', zod: draftLayoutSchema,
        invalid: {
          duplicate_nozzle: invalidBody(draftLayoutSchema, { ...layout, dispensers: [layout.dispensers[0], { ...layout.dispensers[0], external_id: 'D2' }] }, 'A nozzle id twice'),
          unknown_nozzle: invalidBody(draftLayoutSchema, { ...layout, products: [{ ...layout.products[0], nozzle_external_ids: ['N9'] }] }, 'A product naming no nozzle of the layout'),
        },
      },
      ok: { status: '200', description: 'The draft as stored, and what confirming it would change.', schema: 'DraftSaved', zod: draftSavedSchema },
      more: { '404': noStation() },
    }),
    discardDraft: registryOperation({
      method: 'DELETE', tag: 'Layouts', id: 'discardDraft', role: 'station',
      summary: 'Throw the draft away',
      description: 'Removes the draft; the confirmed layout stays.',
      ok: { status: '204', description: 'Gone.' },
      more: { '404': problem('No such station, or it has no draft.', { no_draft: problemExample(404, 'not_found', 'BERLA has no draft layout.') }) },
    }),
    diffDraft: registryOperation({
      method: 'GET', tag: 'Layouts', id: 'diffDraft', role: 'station',
      summary: 'What confirming the draft would change',
      description:
        'Per dispensers, nozzles, storages and products: the ids added and removed, and per changed one each field before and after. ' +
        'Beside it, `v1_fuel_types`: whether the station\'s v1 fuel types agree with the draft, and if not, the ones that would ' +
        '(`agreeing`), to confirm together with the draft. `PUT …/layout/draft` answers with the same two.',
      ok: { status: '200', description: 'The diff.', schema: 'DiffAnswer', zod: diffAnswerSchema },
      more: { '404': problem('No such station, or it has no draft.', { no_draft: problemExample(404, 'not_found', 'BERLA has no draft layout: save one first.') }) },
    }),
    confirmDraft: registryOperation({
      method: 'POST', tag: 'Layouts', id: 'confirmDraft', role: 'station',
      summary: 'Confirm the draft',
      description:
        'In one transaction the draft becomes the confirmed layout (its version one more), the draft is gone and the export record\'s ' +
        '`Last-Modified` moves. Before the answer, this instance validates and publishes against it and every other instance has been ' +
        'told: the next signal anywhere meets it (a removed product\'s price and a removed nozzle leave the status at once). ' +
        '`expected_version`, the confirmed version the change was reviewed against, refuses a confirmation over someone else\'s. ' +
        '`v1_fuel_types` sets the station\'s v1 fuel types in the same transaction: a draft that adds the first nozzle of a fuelling ' +
        'option (or removes the last one) contradicts the v1 fuel types until both change, and they change together, so the v1 export ' +
        'never shows a state in between. The body may be left out.',
      body: {
        schema: 'ConfirmRequest', zod: confirmSchema, required: false,
        invalid: {
          negative: invalidBody(confirmSchema, { expected_version: -1 }, 'A negative version'),
          unknown_fuel_type: invalidBody(confirmSchema, { expected_version: 1, v1_fuel_types: ['350ld'] }, 'A v1 fuel type that is not one'),
        },
      },
      ok: { status: '200', description: 'Confirmed: the new layout and what changed.', schema: 'Confirmed', zod: confirmedSchema },
      more: {
        '404': noStation(),
        '409': problem('There is no draft, or the confirmed layout is no longer the version the change was reviewed against. Nothing was changed.', {
          no_draft: problemExample(409, 'no_draft', 'BERLA has no draft layout to confirm: save a draft first.'),
          version: problemExample(409, 'version_conflict', 'The confirmed layout of BERLA is version 3, not 2: someone confirmed another layout meanwhile. Reload and review the change again.'),
        }),
        '422': problem('The draft contradicts the station\'s v1 fuel types (or the `v1_fuel_types` sent): both layouts and the v1 fuel types stay as they were.', {
          contradiction: problemExample(422, 'layout_contradiction', 'layout: fuelling option 350ld on the confirmed layout is missing from the v1 fuel types (350car)'),
          with_fuel_types: problemExample(422, 'layout_contradiction', 'v1_fuel_types: v1 fuel type 350bus has no nozzle with fuelling option 350hd on the confirmed layout', 'v1_fuel_types sent that disagree with the draft'),
        }),
      },
    }),
    listEvents: registryOperation({
      method: 'GET', tag: 'Events', id: 'listEvents', role: 'station',
      summary: 'The station\'s events',
      description: 'Every event, past ones too, latest start first.',
      ok: { status: '200', description: 'The events.', schema: 'EventList', zod: eventListSchema },
      more: { '404': noStation() },
    }),
    createEvent: registryOperation({
      method: 'POST', tag: 'Events', id: 'createEvent', role: 'station',
      summary: 'Announce an event',
      description: 'A new event (the registry file\'s event; its `id` is made, `ev-` and 12 hex digits, when left out). Export shows it at once.',
      body: {
        schema: 'NewEvent', zod: newEventSchema,
        invalid: { backwards: invalidBody(newEventSchema, { kind: 'maintenance', starts_at: '2027-03-01T12:00:00Z', ends_at: '2027-03-01T08:00:00Z' }, 'Ending before it starts') },
      },
      ok: { status: '201', description: 'The event.', schema: 'Event', zod: eventViewSchema },
      more: { '404': noStation(), '409': problem('The station has an event with this id already.', { taken: problemExample(409, 'conflict', 'BERLA has an event "ev-1" already: change it, or choose another id.') }) },
    }),
    changeEvent: registryOperation({
      method: 'PATCH', tag: 'Events', id: 'changeEvent', role: 'station',
      summary: 'Change an event',
      description: 'The fields given replace the stored ones; the event that results is checked whole (it must still end after it starts).',
      body: { schema: 'EventPatch', zod: eventPatchSchema, invalid: { kind: invalidBody(eventPatchSchema, { kind: 'party' }, 'An unknown kind') } },
      ok: { status: '200', description: 'The event as stored now.', schema: 'Event', zod: eventViewSchema },
      more: { '404': noEvent() },
    }),
    endEvent: registryOperation({
      method: 'POST', tag: 'Events', id: 'endEvent', role: 'station',
      summary: 'End a running event',
      description: 'Sets the event\'s end to `ends_at`, or now; the body may be left out.',
      body: { schema: 'EndEvent', zod: endEventSchema, required: false, invalid: { bad_date: invalidBody(endEventSchema, { ends_at: 'now' }, 'Not an ISO 8601 date and time') } },
      ok: { status: '200', description: 'The event, ended.', schema: 'Event', zod: eventViewSchema },
      more: {
        '404': noEvent(),
        '409': problem('The event has not started yet, or has ended already.', {
          not_started: problemExample(409, 'conflict', 'The event "ev-2" has not started yet (2027-03-02T08:00:00.000Z): change its times or its description instead.'),
          ended: problemExample(409, 'conflict', 'The event "ev-1" ended already (2026-12-01T12:00:00.000Z).'),
        }),
      },
    }),
    broadcastEvent: registryOperation({
      method: 'POST', tag: 'Events', id: 'broadcastEvent', role: 'operator',
      summary: 'Broadcast an event to many stations',
      description: 'The maintenance broadcast: one event, one id, on the stations named in `hrs_ids` or on all the operator\'s; all of them get it or none does.',
      body: {
        schema: 'Broadcast', zod: broadcastSchema,
        invalid: { no_station: invalidBody(broadcastSchema, { kind: 'maintenance', starts_at: '2027-03-01T08:00:00Z', hrs_ids: [] }, 'An empty station list') },
      },
      ok: { status: '201', description: 'The event and the stations it went to.', schema: 'BroadcastAnswer', zod: broadcastAnswerSchema },
      more: {
        '404': noStation(),
        '409': problem('A station has an event with this id already, or the operator has no stations: nothing was broadcast.', {
          taken: problemExample(409, 'conflict', 'HAMBG has an event "ev-7" already: nothing was broadcast. Choose another id.'),
        }),
        '422': problem('A named station belongs to another operator: nothing was broadcast.', {
          other_operator: problemExample(422, 'not_operator_station', 'KIELX is not a station of the operator "h2-demo".'),
        }),
      },
    }),
    getPhoto: registryOperation({
      method: 'GET', tag: 'Photo', id: 'getPhoto', role: 'station',
      summary: 'The station\'s photo',
      description: 'The stored image, as export serves it (with `X-Content-Type-Options: nosniff`).',
      ok: {
        status: '200',
        description: 'The image.',
        headers: { 'Cache-Control': { $ref: '#/components/headers/Cache-Control' } },
      },
      more: { '404': notFound('No such station, or it has no photo.', 'BERLA has no photo.') },
    }),
    putPhoto: registryOperation({
      method: 'PUT', tag: 'Photo', id: 'putPhoto', role: 'station',
      summary: 'Upload the station\'s photo',
      description:
        `The body is the image's bytes: JPEG, PNG or WebP, told from the bytes (never from a header or a name), at most ${MAX_PHOTO_BYTES} bytes ` +
        `and ${MAX_PHOTO_PIXELS} pixels (${MAX_PHOTO_SIDE} per side). The image is decoded whole and stored re-encoded in the same ` +
        'format: turned upright by its orientation tag, in sRGB, its first frame only, without metadata (EXIF, GPS, comments) or ' +
        'anything after the image; JPEG and lossy WebP at quality 90, PNG and lossless WebP losslessly. The answer describes the ' +
        'stored image (its size and SHA-256 are those of the re-encoded bytes). Export serves it at once.',
      rawBody: {
        required: true,
        content: { 'image/jpeg': { schema: { type: 'string', contentMediaType: 'image/jpeg' } }, 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } }, 'image/webp': { schema: { type: 'string', contentMediaType: 'image/webp' } } },
      },
      ok: { status: '200', description: 'The photo as stored.', schema: 'PhotoAnswer', zod: photoAnswerSchema },
      more: {
        '400': problem('The body is empty.', { empty: problemExample(400, 'invalid_body', 'The photo is empty: send the image\'s bytes as the request body.') }),
        '404': noStation(),
        '413': problem(`The image is longer than ${MAX_PHOTO_BYTES} bytes (or would be, re-encoded).`, { too_large: problemExample(413, 'too_large', `The photo is 6291456 bytes; a photo may be at most ${MAX_PHOTO_BYTES} bytes.`) }),
        '415': problem('The bytes are not a JPEG, PNG or WebP image.', {
          not_an_image: problemExample(415, 'unsupported_media_type', 'The photo is not a JPEG, PNG or WebP image (its type is read from its bytes, not from a header or a name).'),
        }),
        '422': problem('The bytes start like a JPEG, PNG or WebP image but do not decode (damaged, truncated, only a signature), or the image has too many pixels.', {
          invalid_image: problemExample(422, 'invalid_image', 'The photo is not a valid PNG image: it cannot be decoded (damaged, truncated or not an image after its first bytes).'),
          image_too_large: problemExample(422, 'image_too_large', `The photo is 100000 × 100000 pixels; a photo may have at most ${MAX_PHOTO_PIXELS} pixels (8000 × 5000) and ${MAX_PHOTO_SIDE} per side.`),
        }),
      },
    }),
    deletePhoto: registryOperation({
      method: 'DELETE', tag: 'Photo', id: 'deletePhoto', role: 'station',
      summary: 'Remove the station\'s photo',
      description: 'Removes it; export answers 404 for it from now on.',
      ok: { status: '204', description: 'Removed (or there was none).' },
      more: { '404': noStation() },
    }),
    listAssignments: registryOperation({
      method: 'GET', tag: 'Assignments', id: 'listAssignments', role: 'station',
      summary: 'The station\'s assignments',
      description: 'Which originator is live or testing for which signal type (and the v1 transmission state), with every originator that may be assigned.',
      ok: { status: '200', description: 'The assignments.', schema: 'Assignments', zod: assignmentsSchema },
      more: { '404': noStation() },
    }),
    putAssignment: registryOperation({
      method: 'PUT', tag: 'Assignments', id: 'putAssignment', role: 'station',
      summary: 'Assign an originator',
      description: '`live`, `testing` or `none` for a v2 signal type; for `v1`, `live`, `testing`, `inactive` or `none`. At most one originator is live per station and type. It applies to the next signal on every instance.',
      body: { schema: 'AssignmentRequest', zod: assignmentRequestSchema, invalid: { state: invalidBody(assignmentRequestSchema, { state: 'on' }, 'An unknown state') } },
      ok: { status: '200', description: 'The assignment as it is now.', schema: 'AssignmentAnswer', zod: assignmentAnswerSchema },
      more: {
        '404': notFound('No such station, originator or signal type.', 'No originator "mon-9".'),
        '409': problem('Another originator is live for the station and type.', {
          live: problemExample(409, 'conflict', 'BERLA already has a live availability originator ("mon-1"); at most one may be live. Set that one to testing or none first.'),
        }),
      },
    }),
    stationAudit: registryOperation({
      method: 'GET', tag: 'Audit', id: 'stationAudit', role: 'station',
      summary: 'The station\'s audit trail',
      description: 'Every change made to the station through the portal or the admin API, newest first, a page at a time.',
      ok: { status: '200', description: 'A page of entries.', schema: 'AuditPage', zod: auditPageSchema },
      more: { '400': problem('`limit` or `cursor` is not valid.', badPage()), '404': noStation() },
    }),
    operatorAudit: registryOperation({
      method: 'GET', tag: 'Audit', id: 'operatorAudit', role: 'operator',
      summary: 'The operator\'s audit trail',
      description: 'Every change made to the operator\'s stations, newest first, a page at a time.',
      ok: { status: '200', description: 'A page of entries.', schema: 'AuditPage', zod: auditPageSchema },
      more: { '400': problem('`limit` or `cursor` is not valid.', badPage()) },
    }),
  };
}

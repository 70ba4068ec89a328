import { V1_MESSAGES } from '../../../domain/import-v1/messages.js';
import { LIMITS } from '../../../domain/import-v2/limits.js';
import { unstorableProblem } from '../../../domain/import-v2/fields.js';
import type { RouteDoc } from '../../../http/contract.js';
import { schemaRef } from '../../../http/openapi.js';
import { signalErrorResponses } from '../../docs/import.js';
import { V2_REFERENCE, type DialectDoc } from './dialects.js';
import { requestExamples } from './examples.js';

/** The operation of `POST /import/v1/hrs-availability` and `POST /import/v1.1/hrs-availability`. */

/** How the messages render where they take a value. */
const CODE = '<fuel_type>';
const TYPE = '<type>';

/**
 * Every message a signal or a request can get (src/domain/import-v1/messages.ts), with where it
 * appears and why, as a Markdown table.
 */
export function messagesTable(d: DialectDoc): string {
  const rows: [string, string, string][] = [
    [V1_MESSAGES.invalidFuellingOption, '`dispensers[i].fuel_type`', `A code outside the ${d.version} vocabulary (the other version's codes included), or not a string.`],
    [V1_MESSAGES.duplicateFuellingOption(CODE), '`dispensers[i].fuel_type`', 'The same fuelling option twice in one signal (on the later entry).'],
    [V1_MESSAGES.notProvided(CODE), '`dispensers[i].fuel_type`', 'The station provides no such option (confirmed layout and registered v1 fuel types): the signal is refused, nothing of it stored.'],
    [V1_MESSAGES.unknownStation('<hrs>'), '`hrs`', 'No station with this id is registered.'],
    [V1_MESSAGES.datetimeFormat, '`datetime`', 'Not ISO 8601 with a UTC offset, or not a real calendar date.'],
    [V1_MESSAGES.tooOld, '`datetime`', 'The reading is more than 5 minutes old.'],
    [V1_MESSAGES.future, '`datetime`', 'The reading is more than 30 seconds ahead of the platform clock.'],
    [V1_MESSAGES.required, 'any required field', '`hrs`, `datetime`, `dispensers`, `maintenance`, `limitedly_available`, `dispensers[i].fuel_type` left out.'],
    [V1_MESSAGES.notNull, 'any required field', 'Sent as `null`.'],
    [V1_MESSAGES.notABoolean, '`maintenance`, `limitedly_available`, `dispensers[i].available`', 'Not a JSON boolean.'],
    [V1_MESSAGES.notAString, '`hrs`, `datetime`, `transmission_id`', 'Not a JSON string.'],
    [V1_MESSAGES.blank, '`hrs`, `datetime`, `transmission_id`', 'An empty string.'],
    [V1_MESSAGES.textTooLong, '`hrs`, `datetime`, `transmission_id`', 'Longer than 200 characters.'],
    [V1_MESSAGES.nullCharacter, 'any string', 'Contains U+0000.'],
    [unstorableProblem('\uD800')!.replace('D800', '<hex>'), 'any string', 'Contains an unpaired surrogate.'],
    [V1_MESSAGES.notAList({}).replace('dict', TYPE), '`non_field_errors` of the body; `dispensers`', `The body, or \`dispensers\`, is not a JSON array (\`${TYPE}\`: \`dict\`, \`str\`, \`int\`, \`float\`, \`bool\`, \`NoneType\`).`],
    [V1_MESSAGES.notAnObject('').replace('str', TYPE), '`non_field_errors` of a signal or a `dispensers` entry', 'A signal, or a `dispensers` entry, is not a JSON object.'],
    [V1_MESSAGES.tooLong(LIMITS.transmissions), '`non_field_errors` of the body', `More than ${LIMITS.transmissions} signals: nothing looked at or stored.`],
    [V1_MESSAGES.tooLong(LIMITS.entries), '`dispensers`', `More than ${LIMITS.entries} entries.`],
    [V1_MESSAGES.notValidated, '`non_field_errors` of a signal', `The request already has more than ${LIMITS.reportedErrors} errors: the signals after that are not looked at (nor stored).`],
  ];
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return (
    '| Message | Where | Cause |\n|---|---|---|\n' +
    rows.map(([message, where, cause]) => `| \`${cell(message)}\` | ${cell(where)} | ${cell(cause)} |`).join('\n')
  );
}

function description(d: DialectDoc): string {
  const deprecation = d.deprecated
    ? `**Deprecated**: import v1 remains functional; use import v1.1 (the same token) or [import v2](${V2_REFERENCE}), ` +
      'its successor, for new integrations. Import v1 cannot carry `700hd`.\n\n'
    : `Successor: [import v2](${V2_REFERENCE}).\n\n`;
  return (
    deprecation +
    `The body is a JSON array of signals (at most ${LIMITS.transmissions}; it may be empty and may hold several signals ` +
    'for one station, applied in order). `Content-Type: application/json` is required (415 otherwise). There is no ' +
    'trailing slash.\n\n' +
    '**Partial acceptance.** The signals are validated independently, in order. When all pass the answer is 204 with ' +
    'an empty body. Otherwise it is 400 with an array aligned with the request: `{}` for each signal that passed — ' +
    '**those are stored all the same** (and published when Live) — and for each failed one an object mapping its ' +
    'fields to arrays of messages, nested for `dispensers` (e.g. ' +
    `\`{"dispensers": [{}, {"fuel_type": ["${V1_MESSAGES.invalidFuellingOption}"]}]}\`). Do not resend the signals that ` +
    'got `{}`; an entry with messages is a signal that was **not** stored, whatever the messages (a fuelling option ' +
    `its station does not provide included: \`{"dispensers": [{}, {"fuel_type": ["${V1_MESSAGES.notProvided(CODE)}"]}]}\`). ` +
    'A body that is not a JSON array gets 400 `{"non_field_errors": ["' +
    V1_MESSAGES.notAList({}).replace(/"/g, '\\"') +
    '"]}` and nothing is stored.\n\n' +
    '**Every option in every signal.** Options left out, or sent with `available: null`, become unknown.\n\n' +
    '**Transmission state.** Live signals are stored and published, Testing ones stored as the latest and not ' +
    'published, others (Inactive) kept for debugging only; the answer does not say which.\n\n' +
    '**Messages:**\n\n' +
    messagesTable(d)
  );
}

export function signalDoc(d: DialectDoc): RouteDoc {
  return {
    tags: ['Signals'],
    operationId: 'postHrsAvailability',
    summary: d.deprecated ? 'Send availability signals (deprecated: use import v1.1 or v2)' : 'Send availability signals',
    description: description(d),
    ...(d.deprecated ? { deprecated: true } : {}),
    requestBody: {
      required: true,
      description: 'A JSON array of signals.',
      content: { 'application/json': { schema: schemaRef('SignalRequest'), examples: requestExamples(d.dialect) } },
    },
    responses: {
      '204': { description: 'Every signal accepted (stored; published when Live). Empty body; never a 200 with a body.' },
      ...signalErrorResponses(),
    },
  };
}

import { V1_MESSAGES } from '../../../domain/import-v1/messages.js';
import type { Dialect } from '../../../domain/import-v1/options.js';

/**
 * The request and error examples of the import v1 / v1.1 documents. They name one station, `BERLA`,
 * providing the two light-duty options (v1 `700car`, `350car`; v1.1 `700ld`, `350ld`); only their
 * time is an example's.
 */

/** The codes of the example station's two options, in each dialect. */
export const CODES: Record<Dialect, readonly [string, string]> = { v1: ['700car', '350car'], 'v1.1': ['700ld', '350ld'] };

/** A code of the other dialect, refused with `Invalid fuelling option`. */
export const OTHER_DIALECT_CODE: Record<Dialect, string> = { v1: '700ld', 'v1.1': '700car' };

const DATETIME = '2026-11-22T10:00:00+01:00';

type Signal = Record<string, unknown>;

/** A signal for the example station: code → `available` (`undefined`: the entry is left out). */
export function signal(dispensers: [string, boolean | null | undefined][], extra: Signal = {}): Signal {
  return {
    hrs: 'BERLA',
    datetime: DATETIME,
    dispensers: dispensers.map(([fuel_type, available]) => (available === undefined ? { fuel_type } : { fuel_type, available })),
    maintenance: false,
    limitedly_available: false,
    ...extra,
  };
}

/** A code of the dialect the example station does not provide (the request examples must pass the schema). */
const NOT_PROVIDED: Record<Dialect, string> = { v1: '350bus', 'v1.1': '700hd' };

/** The 400 body the `partial_acceptance` request example gets. */
export const partialAcceptanceErrors = (dialect: Dialect) => [
  {},
  { dispensers: [{}, {}, { fuel_type: [V1_MESSAGES.duplicateFuellingOption(CODES[dialect][0])] }] },
  {},
];

/** The 400 body the `option_not_provided` request example gets: the signal was refused, nothing of it stored. */
export const notProvidedErrors = (dialect: Dialect) => [{ dispensers: [{}, { fuel_type: [V1_MESSAGES.notProvided(NOT_PROVIDED[dialect])] }] }];

/**
 * The request examples: all but `partial_acceptance` and `option_not_provided` are answered 204; the
 * first 400 with {@link partialAcceptanceErrors}, its first and third signals stored; the second 400 with
 * {@link notProvidedErrors}, nothing stored.
 */
export function requestExamples(dialect: Dialect): Record<string, { summary: string; description?: string; value: Signal[] }> {
  const [a, b] = CODES[dialect];
  return {
    every_option: {
      summary: 'One signal with every option of the station',
      value: [signal([[a, true], [b, false]], dialect === 'v1.1' ? { transmission_id: 'run-42' } : {})],
    },
    unknown_options: {
      summary: 'One option unknown, another left out: both become unknown',
      description: `\`${a}\` is sent with \`available: null\` and \`${b}\` not at all: the station's picture shows both as unknown.`,
      value: [signal([[a, null]])],
    },
    maintenance: {
      summary: 'The station in maintenance',
      value: [signal([[a, false], [b, false]], { maintenance: true })],
    },
    several_signals: {
      summary: 'Several signals for one station, applied in order',
      value: [signal([[a, true], [b, true]]), signal([[a, true], [b, false]], { limitedly_available: true })],
    },
    partial_acceptance: {
      summary: 'Partial acceptance: answered 400, the first and third signals are stored',
      description:
        `The second signal names \`${a}\` twice: the answer is a 400 aligned with the request (the ` +
        '`partial_acceptance` example of the 400 response), and the two valid signals are stored.',
      value: [
        signal([[a, true], [b, true]]),
        signal([[a, true], [b, true], [a, false]]),
        signal([[a, false], [b, true]]),
      ],
    },
    option_not_provided: {
      summary: 'An option the station does not provide: answered 400, the signal is not stored',
      description:
        `The signal names \`${NOT_PROVIDED[dialect]}\`, which the station does not provide: the signal is refused, its ` +
        'entry of the answer names the option (the `option_not_provided` example of the 400 response), and nothing of it ' +
        `is stored; sent without that entry, it is stored (and \`${b}\`, left out, becomes unknown).`,
      value: [signal([[a, true], [NOT_PROVIDED[dialect], true]])],
    },
  };
}

/** The errors of a signal wrong in several places, nested where they belong. */
export function failedSignal(dialect: Dialect): Record<string, unknown> {
  const [a] = CODES[dialect];
  return {
    hrs: [V1_MESSAGES.unknownStation('OSLOA')],
    datetime: [V1_MESSAGES.future],
    dispensers: [{}, { available: [V1_MESSAGES.notABoolean] }, { fuel_type: [V1_MESSAGES.duplicateFuellingOption(a)] }],
    maintenance: [V1_MESSAGES.required],
    limitedly_available: [V1_MESSAGES.notNull],
  };
}

/**
 * The five-state vocabulary as the map shows it (src/domain/status/summary.ts): a station's best value
 * for the selected fuelling option, and each value's colour and letter. A marker never speaks by colour
 * alone: it carries the value's letter (from the catalogue) and its accessible name says the value.
 */
import { durationWords, t } from './i18n.js';
import { FUELLING_OPTIONS, SUMMARY_STATES } from './vocabulary.js';

/** The fuelling options and the five states, as the server's vocabulary names them. */
export const OPTIONS = FUELLING_OPTIONS;
export const STATES = SUMMARY_STATES;

/**
 * Best first, in the vocabulary's order: what a driver can use ranks above what they cannot, and an
 * unknown above a closed (the station's verdict, src/domain/status/verdict.ts, ranks them alike).
 */
const RANK = Object.fromEntries(SUMMARY_STATES.map((state, index) => [state, index]));

/**
 * The station's value for `option` (its entry's status; null when it does not provide the option);
 * with no option, its verdict as every face shows it: the best among its options (one that lists
 * none: CLOSED outside its hours, UNKNOWN otherwise).
 */
export function bestStatus(properties, option) {
  const entries = properties.fuelling_options ?? [];
  if (option) return entries.find((e) => e.fuelling_option === option)?.status ?? null;
  let best = null;
  for (const e of entries) if (best === null || RANK[e.status] < RANK[best]) best = e.status;
  return best ?? (properties.open_now === false ? 'CLOSED' : 'UNKNOWN');
}

/** The CSS class of a value's marker (colours in map.css, checked for contrast by the browser test). */
export const stateClass = (status) => `state-${status.toLowerCase().replace(/_/g, '-')}`;

export const stateLetter = (status) => t(`letter_${status}`);
export const stateName = (status) => t(`status_${status}`);

/** An entry's reason in words; "no signal for 42 minutes" counted from the reading's time. */
export function reasonWords(entry, now = Date.now()) {
  if (entry.reason === 'no_signal') {
    if (!entry.datetime) return t('reason_no_signal_never');
    return t('reason_no_signal', { duration: durationWords(now - Date.parse(entry.datetime)) });
  }
  return t(`reason_${entry.reason}`);
}

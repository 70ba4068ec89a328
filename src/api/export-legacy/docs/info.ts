import { EXPORT_V1 } from '../../export-v1/declaration.js';
import { DIALECT_CODES } from '../../../domain/import-v1/options.js';
import { REASON_STATES, SUMMARY_REASONS, type SummaryReason } from '../../../domain/status/summary.js';
import { SANDBOX_STATIONS, SANDBOX_TOKEN, type Scenario } from '../../../domain/sandbox.js';
import type { DocContext, DocDefinition } from '../../../http/openapi.js';
import { EXPORT_DIALECT_DOCS, V2_REFERENCE, type ExportDialectDoc } from './dialects.js';

/** The export v1 / v1.1 documents' info (its description is the guide a data user reads first) and tags. */

function overview(d: ExportDialectDoc): string {
  const what =
    `The legacy export interface, version ${d.version.slice(1)}: the five-state status summary per ` +
    `${d.dialect === 'v1' ? 'fuel type' : 'fuelling option'} of one or all stations, the station records, their events ` +
    'and photos, and the reference lists. All endpoints are `GET` (`HEAD` works wherever `GET` does) and answer JSON, ' +
    'except the photo.';
  const status = d.frozen
    ? '\n\n**Export v1 is deprecated** (since v1.1 was published, 17 June 2026) and remains functional. Every response ' +
      `says so (RFC 9745): \`Deprecation: ${EXPORT_V1.policy!.headers!.Deprecation}\` and \`Link: ${EXPORT_V1.policy!.headers!.Link}\` ` +
      '(the export v1.1 reference: the same token, with the four fuelling options).' +
      '\n\n**Export v1 is frozen**: its contract does not change any more. It uses the v1 fuel-type codes (`700car`, ' +
      '`350car`, `350bus`), which cannot name heavy-duty 700 bar (`700hd`: left out everywhere), and its records carry no ' +
      'AFIR details. Export v1.1 (`/v1.1/`) is the same interface with the four fuelling options and the AFIR details.'
    : '\n\nExport v1.1 names the four fuelling options of the platform (`700ld`, `350ld`, `700hd`, `350hd`) and carries ' +
      'the stations\' AFIR details in their records.';
  const successor =
    `\n\nFor station data, the successor is **export v2**: [the Export API v2 reference](${V2_REFERENCE}) ` +
    `(\`${V2_REFERENCE}schema\`), with the station layout (dispensers, nozzles, storages, products) and real-time status ` +
    'per signal type (availability, usage, hydrogen storage, pricing). The five-state summary per fuelling option stays on ' +
    'v1.1: export v2 has no counterpart.';
  return what + status + successor;
}

function authentication(d: ExportDialectDoc, config: DocContext['config']): string {
  const sandbox = d.declared.sandbox && config.sandbox
    ? ` The shared sandbox token (see [The sandbox](#the-sandbox)) works on \`${d.declared.prefix}\` only, on the sandbox's sample stations.`
    : d.declared.sandbox
      ? ''
      : ` The shared sandbox token of export v1.1 does not work here (401): export v1 has no sandbox.`;
  return (
    '## Authentication\n\nEvery request carries `Authorization: Bearer <ACCESS_TOKEN>` with an export v1/v1.1 token: one ' +
    `token works on both \`${EXPORT_DIALECT_DOCS.v1.declared.prefix}\` and \`${EXPORT_DIALECT_DOCS['v1.1'].declared.prefix}\`. ` +
    'Personal export v2 tokens and import tokens do not authenticate here. A missing or malformed header, an unknown, ' +
    'revoked or expired token and a token of another generation all get 401 with a problem body saying which (see the ' +
    `401 examples), and nothing is processed.${sandbox}\n\n` +
    `**Rate limit**: at most ${config.exportV1RateLimit} requests per minute per token, v1 and v1.1 together` +
    (d.declared.sandbox && config.sandbox ? `; the sandbox token ${config.sandboxRateLimit} per minute per client address` : '') +
    '. Every answer after authentication carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; beyond ' +
    'the limit the answer is 429 with `Retry-After`. `GET ' + d.declared.prefix + 'hrs/status` gives every station in one ' +
    'request: poll it (once a minute is what the signals\' own cadence supports) rather than each station.'
  );
}

const SCENARIO_WORDS: Record<Scenario, string> = {
  steady: 'every option available, every minute',
  busy: 'options go `UNAVAILABLE` for ten-minute stretches, now one, now another',
  maintenance: '`UNAVAILABLE` (`maintenance`) for the first 20 minutes of every hour',
  limited: '`LIMITEDLY_AVAILABLE` from minute 30 to 44 of every hour',
  flaky: 'reports for 40 minutes, then falls silent for 50: `UNKNOWN` (`no_signal`) for the last 20 of them',
  partial: '`700hd` is never reported: `UNKNOWN` (`not_reported`) for it',
  silent: 'never sends anything: `UNKNOWN` (`no_signal`)',
};

/** The sandbox: the published token and what each sample station shows (v1.1, when the service has it on). */
function sandboxSection(config: DocContext['config']): string {
  const rows = SANDBOX_STATIONS.map(
    (s) => `| \`${s.hrs_id}\` | ${s.name} | ${s.options.map((o) => `\`${o}\``).join(', ')} | ${s.opening_hours === null ? 'not given' : `\`${s.opening_hours}\``} | ${SCENARIO_WORDS[s.scenario]} |`,
  );
  return (
    '## The sandbox\n\nTry this API without an account with the shared sandbox token:\n\n' +
    `    Authorization: Bearer ${SANDBOX_TOKEN}\n\n` +
    'It works on export v1.1 only (401 on export v1 and v2, saying so) and sees only the sandbox\'s sample stations, ' +
    'ids starting with `SBX`, made up and named "Sandbox ...": no production data. No production token ever sees them. ' +
    'Their availability signals are simulated every minute, so each state of the summary can be seen within an hour and ' +
    'a half, and `CLOSED` outside the opening hours (each in its own time zone). Every endpoint behaves as for production ' +
    `data (records with the complete AFIR dataset, events, a photo on \`SBXBE\`, filters, conditional requests). At most ` +
    `${config.sandboxRateLimit} requests per minute per client address.\n\n` +
    '| hrs_id | name | options | opening hours | what its signals do |\n|---|---|---|---|---|\n' +
    rows.join('\n')
  );
}

/** The condition of each rule, in the table's words (src/domain/status/summary.ts). */
const CONDITIONS: Record<SummaryReason, string> = {
  outside_opening_hours: 'the station is outside its opening hours',
  no_signal: 'no live availability reading in the last 30 minutes (by the reading\'s measurement time), or none at all',
  maintenance: 'the reading says the station is in maintenance',
  limited: 'the reading says the station is limitedly available',
  not_reported: 'the reading does not report the option (left out, or `available` null)',
  reported_unavailable: 'the reading reports the option unavailable (import v2: every nozzle offering it is unavailable)',
  reported_available: 'the reading reports the option available (import v2: some nozzle offering it is available)',
};

function summarySection(d: ExportDialectDoc): string {
  const rows = SUMMARY_REASONS.map((reason, i) => `| ${i + 1} | ${CONDITIONS[reason]} | \`${REASON_STATES[reason]}\` | \`${reason}\` |`);
  const v1 =
    d.dialect === 'v1'
      ? ' On v1 the entries are named by v1 fuel type (`700ld` → `700car`, `350ld` → `350car`, `350hd` → `350bus`); ' +
        '`700hd` has no v1 code and is left out.'
      : '';
  return (
    '## The five-state summary\n\n' +
    `\`GET ${d.declared.prefix}hrs/status\` and \`GET ${d.declared.prefix}hrs/{hrs_id}/status\` give, per station, one entry ` +
    `per ${d.dialect === 'v1' ? 'fuel type' : 'fuelling option'} it provides: its \`status\`, one of \`AVAILABLE\`, ` +
    '`LIMITEDLY_AVAILABLE`, `UNAVAILABLE`, `UNKNOWN`, `CLOSED`, and the `reason`, which rule decided it. The rules apply ' +
    'in this order; the first that matches wins:\n\n' +
    '| # | condition | status | reason |\n|---|---|---|---|\n' +
    rows.join('\n') +
    '\n\nThe reading is the station\'s last live availability reading, from import v2 or the legacy import (v1, v1.1), ' +
    'whichever is newest. **Opening hours are evaluated in the station\'s own time zone** (and its public holidays) at the ' +
    'moment of the request, so a station is never shown `CLOSED` after it opened. Each entry\'s `datetime` is the ' +
    'measurement time of the reading it was computed from, also for `CLOSED` and `no_signal` (how long the station has ' +
    `been silent); null when there is no reading at all.${v1}` +
    `\n\n\`?fuelling_option=\` (one of ${DIALECT_CODES[d.dialect].map((c) => `\`${c}\``).join(', ')}) keeps only that entry; ` +
    'the list then leaves out stations that do not provide it. Any other value gets 400 naming the allowed codes.'
  );
}

const HTTP_SECTIONS = (d: ExportDialectDoc) => [
  `## Conditional requests\n\n\`GET ${d.declared.prefix}hrs\` and \`GET ${d.declared.prefix}hrs/{hrs_id}\` return ` +
    '`Last-Modified`; sending it back as `If-Modified-Since` yields 304 with an empty body when nothing changed. The ' +
    'timestamp tracks the exported static content (station fields, layout, events), not real-time signals. The status ' +
    'endpoints are not conditional.',
  '## Errors\n\nErrors are RFC 9457 problem details (`application/problem+json`: `type`, `title`, `status`, `detail`) ' +
    'with a stable `code`. An unknown path gets 404; a known path with another method gets 405 with `Allow`. A 500 is an ' +
    'unexpected platform error: please report it with the response\'s `X-Request-Id`.',
];

export function info(d: ExportDialectDoc, context: DocContext): DocDefinition['info'] {
  return {
    title: `HRS signal platform: Export API ${d.version}`,
    version: context.version,
    summary: d.frozen
      ? 'The frozen legacy export: five-state status per v1 fuel type, station records, events, photos.'
      : 'The legacy export: five-state status per fuelling option, station records with AFIR details, events, photos.',
    description: [
      overview(d),
      authentication(d, context.config),
      ...(d.declared.sandbox && context.config.sandbox ? [sandboxSection(context.config)] : []),
      summarySection(d),
      ...HTTP_SECTIONS(d),
    ].join('\n\n'),
    license: { name: 'CC BY 4.0 (exported data)', identifier: 'CC-BY-4.0' },
  };
}

export const tags = (): DocDefinition['tags'] => [
  { name: 'Status', description: 'The five-state status summary, computed at each request.' },
  { name: 'Stations', description: 'Station records, events and photos.' },
  { name: 'Reference', description: 'Reference lists resolving codes used elsewhere.' },
];

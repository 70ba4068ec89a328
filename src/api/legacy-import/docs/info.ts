import { V1_TO_CANONICAL } from '../../../domain/import-v1/options.js';
import { FUELLING_OPTIONS } from '../../../domain/vocabulary.js';
import type { DocContext, DocDefinition } from '../../../http/openapi.js';
import { bearerScheme } from '../../docs/headers.js';
import { activeStationsPath, fuelTypePath, signalPath, V2_REFERENCE, type DialectDoc } from './dialects.js';

/**
 * The import v1 / v1.1 documents' info (its description is the guide a signal originator reads
 * first), tags and security scheme.
 */

const SECURITY = 'importV1Token';

function overview(d: DialectDoc): string {
  const what =
    `The legacy import interface, version ${d.version.slice(1)}, through which signal originators (station monitoring ` +
    'systems) send the availability of their stations per fuelling option with `' + signalPath(d) + '`. ';
  const status = d.deprecated
    ? '**Import v1 is deprecated** (since v1.1 was published, 17 June 2026). It remains functional; it cannot carry the ' +
      'heavy-duty 700 bar option (`700hd`). Every response says so (RFC 9745): `Deprecation: ' +
      `${d.declared.policy!.headers!.Deprecation}\` and \`Link: ${d.declared.policy!.headers!.Link}\` (the import v1.1 ` +
      'reference: the same token and signals, with the v1.1 codes). '
    : 'Import v1.1 names the four fuelling options of the platform, heavy-duty 700 bar included. ';
  return (
    what +
    status +
    `Its successor is **import v2**: [the Import API v2 reference](${V2_REFERENCE}) (\`${V2_REFERENCE}schema\`), with ` +
    'one endpoint per signal category (availability, usage, hydrogen storage, pricing) against the station\'s ' +
    'registered layout. New integrations should use import v2.'
  );
}

const AUTHENTICATION =
  '## Authentication\n\nEvery request carries `Authorization: Bearer <ACCESS_TOKEN>` with an import v1/v1.1 token of the ' +
  'signal originator: one token works on both `/import/v1/` and `/import/v1.1/`. ' +
  'Tokens of other generations (import v2, export v1/v1.1, personal export v2) do not authenticate here. A missing or ' +
  'malformed header, an unknown, revoked or expired token, a deactivated originator and a token of another generation ' +
  'all get 401 with `{"detail": "..."}` saying which (see the 401 examples), and nothing is processed.';

/** The two vocabularies and their fixed mapping, from src/domain/import-v1/options.ts and the reference data. */
function vocabulary(d: DialectDoc, reference: DocContext['reference']): string {
  const v1Of = new Map([...V1_TO_CANONICAL].map(([v1, option]) => [option, v1]));
  const descriptionOf = new Map(reference.fuellingOptions.map((o) => [o.code, o.description]));
  const rows = FUELLING_OPTIONS.map((option) => {
    const v1 = v1Of.get(option);
    return `| ${v1 ? `\`${v1}\`` : '— (none: v1 cannot carry it)'} | \`${option}\` | ${descriptionOf.get(option) ?? ''} |`;
  });
  const sent =
    d.dialect === 'v1'
      ? `On \`${d.declared.prefix}\` \`dispensers[].fuel_type\` takes the v1 fuel types (left column); the v1.1 codes are refused.`
      : `On \`${d.declared.prefix}\` \`dispensers[].fuel_type\` takes the fuelling options (middle column), the codes of import v2 ` +
        'and export v2; the v1 fuel types are refused.';
  return (
    '## Fuelling options\n\n' +
    `${sent} Any other value gets \`Invalid fuelling option\`. The mapping is fixed; the platform stores and publishes ` +
    'the middle column, whichever dialect sent it.\n\n' +
    '| v1 fuel type (`/import/v1/`) | fuelling option (`/import/v1.1/`, import v2, export v2) | Meaning |\n|---|---|---|\n' +
    rows.join('\n') +
    `\n\n\`GET ${fuelTypePath(d)}\` lists the codes this version accepts (the authoritative list).`
  );
}

function unknownWhenOmitted(d: DialectDoc): string {
  const heavyDuty =
    d.dialect === 'v1'
      ? 'v1 cannot name `700hd`: at a heavy-duty station with a 700 bar heavy-duty nozzle that option is always unknown ' +
        'from an import v1 signal (send through import v1.1 or v2 to report it).'
      : 'If `700hd` is left out for a heavy-duty station that provides it, that option is shown as unknown.';
  return (
    '## Every option in every signal\n\nA signal is the station\'s whole availability picture: it should list every ' +
    'fuelling option the station provides, each once. **An option left out, or sent with `available: null` (or ' +
    'without `available`), becomes unknown**; the picture of the previous signal is not kept. ' +
    heavyDuty +
    ' The options a station provides are those of its operator-confirmed layout and its registered v1 fuel types; ' +
    'a signal naming an option it does not provide is refused and nothing of it is stored (its entry of the 400: ' +
    '`Fuelling option not provided by this station: ...`), as a code outside the vocabulary is. ' +
    '`maintenance: true` and `limitedly_available: true` override the per-option picture downstream. An accepted Live ' +
    'signal replaces the station\'s published availability when it is the newest by `datetime`, whichever API ' +
    'generation (v1, v1.1, v2) sent the previous one. Without a new signal for 30 minutes the status falls back to unknown.'
  );
}

function transmissionStates(d: DialectDoc): string {
  return (
    '## Transmission states\n\nThe station operator sets, per signal originator and station, a transmission state for ' +
    'import v1/v1.1 (one state for both versions, apart from the originator\'s import v2 assignments):\n\n' +
    '| State | What happens to an accepted signal |\n|---|---|\n' +
    '| Live | Stored and published: it drives the station\'s public availability. |\n' +
    '| Testing | Stored as the latest signal and validated end to end; not published. |\n' +
    '| Inactive (or not assigned) | Kept for debugging by the platform team only; not published. |\n\n' +
    'The answer is the same in every state (204, or 400 for the signals that failed validation).' +
    (d.declared.activeStations
      ? ` \`GET ${activeStationsPath(d)}\` lists the stations where the token's originator is Live or Testing.`
      : ' `GET /import/v1.1/active-stations` (import v1.1, same token) lists the stations where the token\'s originator is Live or Testing.')
  );
}

const rateLimit = (limit: number) =>
  `## Rate limit\n\n${limit} request${limit === 1 ? '' : 's'} per minute per signal originator, **one budget for import v1 and v1.1 together** ` +
  '(every import v1/v1.1 token of the originator spends it; its import v2 budget is apart). Legacy originators were ' +
  'never told of a limit, so it is ten times import v2\'s: a request per station every minute stays far below it; ' +
  'only a runaway client meets it. Every response after ' +
  'authentication carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; over the limit the answer ' +
  'is 429 with `Retry-After` and nothing is processed. Recommended cadence: a signal per station every minute, even ' +
  'when unchanged. After an outage, send a fresh reading rather than replaying queued ones.';

const ERRORS =
  '## Errors\n\nErrors are JSON: `{"detail": "..."}`, for validation failures an array aligned with the request ' +
  '(`ValidationErrors`), or `{"non_field_errors": [...]}` when the body is not a JSON array. A signal\'s errors map ' +
  'each field to its messages, nested for `dispensers` (an array aligned with its entries). The paths have no ' +
  'trailing slash: with one, the answer is 404 saying so (there is never a redirect). An unknown path gets 404; a ' +
  'known path with another method gets 405 with `Allow`; `OPTIONS` answers 204 with `Allow`; `HEAD` works wherever ' +
  '`GET` does. A 500 is an unexpected platform error: please report it with the response\'s `X-Request-Id`. A 503 ' +
  'from the infrastructure means temporary unavailability: retry with backoff.';

function versioning(d: DialectDoc): string {
  return (
    '## Versioning\n\nThree generations exist, each with its own path prefix and credential type: import v1 ' +
    '(`/import/v1/...`, deprecated, still functional), import v1.1 (`/import/v1.1/...`, the same token and signal as ' +
    'v1 with the fuelling-option codes `700ld`, `350ld`, `700hd`, `350hd` and `GET /import/v1.1/active-stations`) and ' +
    `import v2 (\`/import/v2/...\`, [reference](${V2_REFERENCE})), the successor. Import v2 differs: one endpoint per ` +
    'signal category with a required trailing slash; batches all-or-nothing (v1 and v1.1 store the valid signals ' +
    'despite a 400); signals name the station\'s registered nozzles; its own tokens. ' +
    (d.dialect === 'v1'
      ? 'The import v1.1 reference is at [/import/v1.1/doc/](/import/v1.1/doc/).'
      : 'The import v1 reference is at [/import/v1/doc/](/import/v1/doc/).')
  );
}

/**
 * Laid out as the legacy export's info (../../export-legacy/docs/info.ts): a title, the version and a
 * summary per dialect over the description's sections, the fields every document's info has. Every
 * text is the generation's own, so a shared builder would take all of them as arguments and save nothing.
 */
export function info(d: DialectDoc, context: DocContext): DocDefinition['info'] {
  return {
    title: `HRS signal platform: Import API ${d.version}`,
    version: context.version,
    summary: d.deprecated
      ? 'Deprecated: signal originators send station availability per v1 fuel type. Successor: import v2.'
      : 'Signal originators send station availability per fuelling option. Successor: import v2.',
    description: [
      overview(d),
      AUTHENTICATION,
      vocabulary(d, context.reference),
      unknownWhenOmitted(d),
      transmissionStates(d),
      rateLimit(context.config.importV1RateLimit),
      ERRORS,
      versioning(d),
    ].join('\n\n'),
  };
}

export const tags = (): DocDefinition['tags'] => [
  { name: 'Signals', description: 'Availability signals: the body is a JSON array of signals, each validated on its own.' },
  { name: 'Reference', description: 'The codes `dispensers[].fuel_type` accepts.' },
  { name: 'Stations', description: 'The stations covered by the token.' },
];

export const securitySchemes = (): DocDefinition['securitySchemes'] => ({
  [SECURITY]: bearerScheme(
    'An import v1/v1.1 token of the signal originator; one token works on import v1 and v1.1. Each API generation ' +
    'has its own credential: import v2 and export tokens are refused here.',
  ),
});

import { bySectionKey } from '../../../domain/categories/index.js';
import type { RouteDoc } from '../../../http/contract.js';
import type { DocContext } from '../../../http/openapi.js';
import { COMMON, problem, problemBody } from '../../export/docs.js';

/** The status stream (a WebSocket): its protocol, told in the document's description, and its operation. */

const STATUS_EXAMPLE = {
  hrs_id: 'BERLA',
  ...bySectionKey(() => null),
  availability: {
    datetime: '2026-11-23T10:15:00Z',
    received_datetime: '2026-11-23T10:15:02Z',
    freshness: 'fresh',
    station: { maintenance: false, limitedly_available: false },
    nozzles: [{ id: 'N1', available: true }],
  },
};

const code = (value: unknown) => '`' + JSON.stringify(value) + '`';

/** `1 MiB`, `512 KiB`, `20000 bytes`. */
function bytesText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** The status stream's protocol, for the document's description (limits as configured). */
export const pushDescription = (config: DocContext['config']) => [
  '## Status stream (WebSocket)',
  '`GET /v2/hrs/status/stream` upgrades to a WebSocket that pushes status changes instead of polling. Every message ' +
    'either way is one JSON text frame with a `type`; any client message may carry an `id` (string or number), echoed ' +
    'in its answer.',
  '**Authentication**: the `Authorization: Bearer <token>` header of the upgrade request (a bad token gets the HTTP ' +
    '401 problem, and no upgrade), or, for browsers, which cannot set headers, the first message ' +
    `${code({ type: 'auth', token: '<ACCESS_TOKEN>' })} within ${config.pushAuthTimeoutMs / 1000} seconds. Never put the token in the URL. The server ` +
    `answers ${code({ type: 'authenticated', user: 'alice' })}. Opening a stream counts once against the rate limits; ` +
    `one user holds at most ${config.pushStreamsPerUser} open streams (one more is refused: HTTP 429 at the upgrade, or an error and close ` +
    'code 4429 after an `auth` message).',
  '**Subscribing**: ' +
    `${code({ type: 'subscribe', hrs_ids: ['BERLA', 'HAMBG'] })} or ${code({ type: 'subscribe', hrs_ids: '*' })} ` +
    '(every station, including ones registered later), and `unsubscribe` in the same form (`"*"` drops every ' +
    'subscription). Each is acknowledged with the stations named and every current subscription: ' +
    `${code({ type: 'subscribed', hrs_ids: ['BERLA', 'HAMBG'], subscriptions: ['BERLA', 'HAMBG'] })}, then a subscribe ` +
    `gets a snapshot of the named stations' status objects (the shape of \`GET /v2/hrs/{hrs_id}/status\`): ` +
    `${code({ type: 'snapshot', stations: [STATUS_EXAMPLE] })}. An unknown station id refuses the whole subscribe ` +
    `(${code({ type: 'error', code: 'unknown_station', detail: '...', hrs_ids: ['ZZZZZ'] })}).`,
  '**Changes**: afterwards, whenever the status object of a subscribed station changes (a new reading, a section ' +
    'turning null at the 30-minute fallback, a layout change), the whole object: ' +
    `${code({ type: 'status', station: STATUS_EXAMPLE })}; changes of one instant are sent as one message with the ` +
    `result, in order. A station leaving the registry: ${code({ type: 'removed', hrs_id: 'BERLA' })}.`,
  '**Errors**: a bad message is answered ' +
    `${code({ type: 'error', code: 'invalid_message', detail: 'Invalid "subscribe" message - hrs_ids: ...' })} and ` +
    'the connection stays open. Codes: `invalid_message`, `not_authenticated`, `already_authenticated`, ' +
    '`authentication_failed`, `too_many_streams`, `throttled`, `unknown_station`, `not_subscribed`.',
  '**Closing**: 1001 the server is shutting down, or the stream has been open for its maximum age ' +
    `(${config.pushMaxAgeSeconds} s at most, closed between 90 % and 100 % of it): reconnect; 1009 a message over 64 KiB; 4000 the client fell ` +
    `too far behind (more than ${bytesText(config.pushMaxBacklogBytes)} waited to be sent to it); 4401 the token was ` +
    'refused, revoked or expired; 4408 no ' +
    '`auth` message in time; 4429 too many streams or a rate limit exhausted. The server pings idle connections; ' +
    'reconnect with backoff and subscribe again (the snapshot brings you up to date).',
].join('\n\n');

/** `GET /v2/hrs/status/stream`: the upgrade to the status stream. */
export function streamStatusDoc(streamsPerUser: number): RouteDoc {
  return {
    tags: ['Status'],
    operationId: 'streamStationStatus',
    summary: 'Status changes pushed over a WebSocket',
    description:
      'Upgrades to a WebSocket (`Upgrade: websocket`) that pushes the station status object of subscribed ' +
      'stations whenever it changes: see "Status stream" above for the messages. Authenticate with the ' +
      '`Authorization` header, or (browsers) with an `auth` message first; never in the URL. Opening a stream ' +
      `counts once against the rate limits; a user holds at most ${streamsPerUser} open streams.`,
    responses: {
      '101': { description: 'Switching to the WebSocket protocol.' },
      '426': problem('Not a WebSocket upgrade request: connect with `Upgrade: websocket`.', {
        plain_get: {
          value: problemBody(426, 'Upgrade Required', 'upgrade_required', 'This endpoint is a WebSocket: connect with "Upgrade: websocket".'),
        },
      }),
      ...COMMON,
    },
  };
}

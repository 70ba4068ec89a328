import type { Config } from '../../config/config.js';
import type { RouteDoc } from '../../http/contract.js';
import { headerRef, responseRef } from '../../http/openapi.js';
import { problem, problemBody } from '../export/docs.js';

/** `POST /map/v1/alerts` as an operation of the export v2 document, beside the map's other routes (docs/alerts.md). */
export function alertRequestDoc(config: Pick<Config, 'alertConfirmMs' | 'alertLifetimeMs' | 'alertsPerAddress' | 'alertsPerStation' | 'alertRequestsPerHour'>): RouteDoc {
  const hours = Math.round(config.alertConfirmMs / 3_600_000);
  const days = Math.round(config.alertLifetimeMs / 86_400_000);
  return {
    tags: ['Public map'],
    operationId: 'requestDriverAlert',
    summary: 'Ask to be told by e-mail when a fuelling option is available again, or goes down',
    description:
      'No credential. A confirmation e-mail is sent to the address (double opt-in): nothing else is sent, and the alert does not ' +
      `start, until its link is followed (within ${hours} hours; an unconfirmed alert is then deleted with its address). A confirmed ` +
      'alert sends one e-mail per transition of the option to the wanted side (`available`: AVAILABLE or LIMITEDLY_AVAILABLE after ' +
      'it was not; `unavailable`: UNAVAILABLE), once the new status has held for the settle time (ALERT_SETTLE), in the chosen ' +
      `language, with the station's local time, a link to the map and a one-click unsubscribe (RFC 8058). It lives ${days} days ` +
      'unless kept longer from its e-mails (a reminder comes before it ends); the address is deleted when it ends. Asking again for ' +
      'the same alert sends a new confirmation link (following it keeps an active alert for another period). Limited to ' +
      `${config.alertRequestsPerHour} requests per hour per client address, besides the map's own limits; at most ` +
      `${config.alertsPerAddress} alerts per address and ${config.alertsPerStation} per station.`,
    security: [],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          examples: { available: { value: { hrs_id: 'BERLA', fuelling_option: '700ld', when: 'available', email: 'driver@example.org', language: 'de' } } },
        },
      },
    },
    responses: {
      '202': {
        description: 'The confirmation e-mail is queued.',
        content: {
          'application/json': {
            examples: {
              sent: { value: { status: 'confirmation_sent', detail: 'A confirmation e-mail is on its way: the alert starts when its link is followed.', confirm_within_seconds: config.alertConfirmMs / 1000 } },
            },
          },
        },
      },
      '400': problem('The body is not JSON, or not an alert request (a field missing or of the wrong kind, or one it does not have).', {
        not_an_address: { value: problemBody(400, 'Bad Request', 'invalid_input', 'email: must be an e-mail address') },
      }),
      '404': problem('The map shows no station with this id.', { not_on_map: { value: problemBody(404, 'Not Found', 'not_found', 'No station with hrs_id "OSLO1" on the map.') } }),
      '409': problem('A cap is reached: the address has the most alerts one address may have, or the station the most one station may have.', {
        address: {
          value: problemBody(409, 'Conflict', 'alert_limit', `This address has ${config.alertsPerAddress} alerts already, the most one address may have: stop one (a link in each of its e-mails) before asking for another.`),
        },
      }),
      '422': problem('The station provides no such fuelling option.', {
        no_option: { value: problemBody(422, 'Unprocessable Content', 'unknown_option', 'Station "BERLA" provides no fuelling option "350hd".') },
      }),
      '429': problem(
        `More than ${config.alertRequestsPerHour} alert requests this hour from the client address, or one of the map's limits; nothing was recorded.`,
        { hour: { value: problemBody(429, 'Too Many Requests', 'throttled', `Rate limit exceeded: at most ${config.alertRequestsPerHour} alert requests per hour per client address. Retry in 1200 seconds (20 minutes).`) } },
        { 'Retry-After': headerRef('Retry-After') },
      ),
      '500': responseRef('InternalError'),
      '503': problem('No e-mail can be queued now (Redis away): nothing was recorded or sent.', {
        mail: { value: problemBody(503, 'Service Unavailable', 'mail_unavailable', 'No e-mail can be queued now; nothing was recorded. Try again in a minute.') },
      }),
    },
  };
}

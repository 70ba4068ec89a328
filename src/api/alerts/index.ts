import type { Logger } from 'pino';
import { z } from 'zod';
import type { Sql } from '../../../db/connect.js';
import { alertByToken, alertToConfirm, confirmAlert, deleteAlert, renewAlert, requestAlert } from '../../../db/queries/driver-alerts.js';
import { renderAlertConfirmation } from '../../domain/alerts/mail.js';
import { sideOf, type Side } from '../../domain/alerts/sides.js';
import { alertAcceptedSchema, alertRequestSchema } from '../../domain/alerts/schemas.js';
import { boundedString, utf8Fault, utf8FaultText } from '../../domain/text.js';
import { parseJson } from '../../http/request.js';
import type { Config } from '../../config/config.js';
import { HttpError, JSON_TYPE, PROBLEM_ERRORS, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { textQuery } from '../../http/query.js';
import { describeWait } from '../../http/rate-limit-guard.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import type { LinkMail } from '../../../workers/mail/producer.js';
import { isMapped, type MapFeed } from '../map/feed.js';
import type { StationLookup } from '../../domain/stations.js';
import { queued } from '../unavailable.js';
import { hashSecret, newSecret } from '../secrets.js';
import { alertRequestDoc } from './docs.js';
import { ALERT_PAGE_CSS, confirmedPage, confirmPage, gonePage, managePage, pageLanguage, stoppedPage, unsubscribePage } from './pages.js';

/**
 * Driver alerts on the public map's family (docs/alerts.md):
 * - `POST /map/v1/alerts`: a driver asks to be told when a station's fuelling option is available again
 *   (`when: available`) or goes down (`when: unavailable`); the answer is a 202 once the confirmation
 *   e-mail is queued (double opt-in: nothing else is ever sent before its link is followed);
 * - `/map/alerts/confirm`, `/map/alerts/manage`, `/map/alerts/unsubscribe` (and `renew`): the pages the
 *   e-mails link to, a GET showing the page and its button, a POST of the button doing it; the
 *   unsubscribe link also takes RFC 8058's one-click POST (`List-Unsubscribe=One-Click`).
 * Requests are limited per client address (ALERT_REQUESTS_PER_HOUR) besides the map's own limits, and
 * capped per address (ALERTS_PER_ADDRESS) and per station (ALERTS_PER_STATION).
 */

export interface AlertDeps {
  sql: Sql;
  feed: MapFeed;
  stations: StationLookup;
  limiter: RateLimiter;
  log: Logger;
  config: Pick<Config, 'alertConfirmMs' | 'alertLifetimeMs' | 'alertsPerAddress' | 'alertsPerStation' | 'alertRequestsPerHour'>;
  baseUrl: () => string;
  /** Queues a link e-mail (its secret is never stored); throws the 503 of mail not queued. */
  sendLink(to: string, mail: LinkMail): Promise<void>;
  mailReady(): boolean;
  /** An alert was confirmed: the options' changes are recorded from now on (the change recorder reads its topics again before the page answers). */
  confirmed(): Promise<void>;
}


/** The pages may post their forms here only; the token in their address is never sent on. */
const PAGE_POLICY = {
  'Content-Security-Policy': "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

const page = (status: number, html: string): Reply => ({
  status,
  headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...PAGE_POLICY },
  body: html,
});

/** The longest token taken: the secrets are 43 characters. */
export const TOKEN_MAX = 100;

/** What a page's form posts: its token (`application/x-www-form-urlencoded`, or the same as JSON). */
export const alertFormSchema = z
  .strictObject({ token: boundedString(TOKEN_MAX, `must be at most ${TOKEN_MAX} characters`) })
  .meta({ examples: [{ token: 'Jd4S0bq3o3x2vK9m1Yp8nQ7rT6wZ5aB4cE3fG2hI1jK' }] });

/**
 * The token of a page's form (`token=`, or `{"token": …}`), or of the link's address (RFC 8058's
 * one-click POST carries it there); a longer one than any secret is refused (400).
 */
function tokenOf(req: Request): string | undefined {
  let inBody: string | null = null;
  if (req.body && req.body.length > 0) {
    if (/^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
      const value = (parseJson(req) as { token?: unknown } | null)?.token;
      inBody = typeof value === 'string' ? value : null;
    } else {
      const fault = utf8Fault(req.body);
      if (fault) throw new HttpError(400, 'parse_error', `The form is not valid UTF-8: ${utf8FaultText(fault)}.`);
      inBody = new URLSearchParams(req.body.toString('utf8')).get('token');
    }
  }
  const token = inBody ?? req.query.get('token');
  if (token && token.length > TOKEN_MAX) throw new HttpError(400, 'invalid_input', `token: must be at most ${TOKEN_MAX} characters`);
  return token ?? undefined;
}

export function alertRoutes(server: HttpServer, family: Family, deps: AlertDeps): void {
  const { sql, config } = deps;
  const perHour = { limit: config.alertRequestsPerHour, windowSeconds: 3600, name: 'hour' };

  /** The option's side now, as the map shows it. */
  const sideNow = async (hrsId: string, option: string): Promise<Side> => {
    const held = await deps.feed.station(hrsId);
    const entry = held?.live.fuelling_options.find((o) => o.fuelling_option === option);
    return entry ? sideOf(entry.status) : 'none';
  };

  server.route({
    family,
    public: true,
    method: 'POST',
    path: '/map/v1/alerts',
    body: alertRequestSchema,
    response: { 202: alertAcceptedSchema },
    doc: alertRequestDoc(config),
    handler: async (req, input): Promise<Reply> => {
      const body = input.body!;
      const station = deps.stations.station(body.hrs_id);
      if (!isMapped(station)) throw new HttpError(404, 'not_found', `No station with hrs_id "${body.hrs_id}" on the map.`);
      const held = await deps.feed.station(body.hrs_id);
      if (!held?.live.fuelling_options.some((o) => o.fuelling_option === body.fuelling_option)) {
        throw new HttpError(422, 'unknown_option', `Station "${body.hrs_id}" provides no fuelling option "${body.fuelling_option}".`);
      }
      if (!deps.mailReady()) throw new HttpError(503, 'mail_unavailable', 'No e-mail can be queued now; nothing was recorded. Try again in a minute.', { headers: { 'Retry-After': '30' } });
      if (deps.limiter.ready) {
        const limited = await deps.limiter.hit(`alerts:address:${req.clientAddress}`, [perHour]).catch(() => undefined);
        if (limited && !limited.allowed) {
          const seconds = limited.retryAfterSeconds ?? 60;
          throw new HttpError(429, 'throttled', PROBLEM_ERRORS.throttled(`at most ${perHour.limit} alert requests per hour per client address`, describeWait(seconds)), {
            headers: { 'Retry-After': String(seconds) },
          });
        }
      }
      const secret = newSecret();
      const confirmUntil = new Date(Date.now() + config.alertConfirmMs);
      const wants = body.when === 'available' ? 'up' : 'down';
      const outcome = await requestAlert(
        sql,
        { email: body.email, language: body.language, hrsId: body.hrs_id, fuellingOption: body.fuelling_option, wants, confirmHash: hashSecret(secret), confirmUntil, manageToken: newSecret() },
        { perAddress: config.alertsPerAddress, perStation: config.alertsPerStation },
      );
      if (outcome.outcome === 'address_full') {
        throw new HttpError(409, 'alert_limit', `This address has ${outcome.limit} alerts already, the most one address may have: stop one (a link in each of its e-mails) before asking for another.`);
      }
      if (outcome.outcome === 'station_full') {
        throw new HttpError(409, 'alert_limit', `Station "${body.hrs_id}" has ${outcome.limit} alerts already, the most one station may have.`);
      }
      const mail = renderAlertConfirmation({
        email: body.email, language: body.language, station: { hrsId: station.hrsId, name: station.name, timeZone: station.timeZone ?? null },
        fuellingOption: body.fuelling_option, wants, confirm: `${deps.baseUrl()}/map/alerts/confirm?token=${secret}`, until: confirmUntil,
      });
      await queued('mail', deps.sendLink(body.email, mail));
      return {
        status: 202,
        headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store' },
        body: JSON.stringify({
          status: 'confirmation_sent',
          detail: 'A confirmation e-mail is on its way: the alert starts when its link is followed.',
          confirm_within_seconds: Math.round(config.alertConfirmMs / 1000),
        }),
      };
    },
  });

  const pageRoute = (method: 'GET' | 'POST', path: string, handler: (req: Request) => Promise<Reply>) =>
    server.route({ family, public: true, method, path, query: textQuery('token'), ...(method === 'POST' ? { body: true } : {}), handler });

  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/alerts/alerts.css',
    handler: () => ({ status: 200, headers: { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'max-age=3600' }, body: ALERT_PAGE_CSS }),
  });

  const gone = (req: Request) => page(404, gonePage(pageLanguage(undefined, req.headers['accept-language'])));

  pageRoute('GET', '/map/alerts/confirm', async (req) => {
    const secret = tokenOf(req);
    const alert = secret ? await alertToConfirm(sql, hashSecret(secret)) : undefined;
    return alert ? page(200, confirmPage(alert, secret!)) : gone(req);
  });
  pageRoute('POST', '/map/alerts/confirm', async (req) => {
    const secret = tokenOf(req);
    const waiting = secret ? await alertToConfirm(sql, hashSecret(secret)) : undefined;
    if (!waiting) return gone(req);
    const alert = await confirmAlert(sql, hashSecret(secret!), await sideNow(waiting.hrsId, waiting.fuellingOption), config.alertLifetimeMs);
    if (!alert) return gone(req);
    await deps.confirmed();
    return page(200, confirmedPage(alert));
  });
  pageRoute('GET', '/map/alerts/manage', async (req) => {
    const token = tokenOf(req);
    const alert = token ? await alertByToken(sql, token) : undefined;
    return alert ? page(200, managePage(alert)) : gone(req);
  });
  pageRoute('POST', '/map/alerts/renew', async (req) => {
    const token = tokenOf(req);
    const alert = token ? await renewAlert(sql, token, config.alertLifetimeMs) : undefined;
    return alert ? page(200, managePage(alert, 'renewed')) : gone(req);
  });
  pageRoute('GET', '/map/alerts/unsubscribe', async (req) => {
    const token = tokenOf(req);
    const alert = token ? await alertByToken(sql, token) : undefined;
    return alert ? page(200, unsubscribePage(alert)) : gone(req);
  });
  pageRoute('POST', '/map/alerts/unsubscribe', async (req) => {
    const token = tokenOf(req);
    const alert = token ? await deleteAlert(sql, token) : undefined;
    if (alert) deps.log.info({ alert: alert.id, hrs_id: alert.hrsId }, 'driver alert stopped');
    return alert ? page(200, stoppedPage(alert)) : gone(req);
  });
}

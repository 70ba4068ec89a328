import { escapeHtml } from '../../domain/mail-layout.js';
import { localTime, optionName, type AlertLanguage } from '../../domain/alerts/words.js';
import type { AlertView } from '../../../db/queries/driver-alerts.js';
import { knownTimeZone } from '../../domain/mail-layout.js';

/**
 * The driver alerts' pages, what a link of their e-mails opens: confirm (the double opt-in's second
 * step), manage (keep it longer, or stop it) and unsubscribe. Served by the server as they are, plain
 * HTML forms that work without JavaScript, in the alert's language (the visitor's `Accept-Language`
 * when the link names no alert), under a policy that lets them post to this server only. A link
 * followed by a mail scanner changes nothing: every change is a POST of the page's button (or the
 * RFC 8058 one-click POST a mail client sends).
 */

const WORDS = {
  en: {
    title: 'Station alert',
    confirmHeading: 'Confirm your alert',
    confirmWhat: (what: string, station: string, when: string) => `Tell me by e-mail ${when}: ${what} at ${station}.`,
    confirmButton: 'Turn the alert on',
    confirmedHeading: 'Your alert is on',
    confirmedText: (until: string) => `You will get one e-mail each time the status changes as you asked, once it has held for a while. The alert runs until ${until}; the e-mails let you keep it longer or stop it.`,
    manageHeading: 'Your alert',
    manageWhat: (what: string, station: string, when: string) => `E-mail ${when}: ${what} at ${station}.`,
    runsUntil: (until: string) => `It runs until ${until}.`,
    pendingText: 'It is not confirmed yet: follow the link in the confirmation e-mail.',
    renewButton: 'Keep the alert',
    renewedHeading: 'Your alert is kept',
    stopButton: 'Stop the alert',
    unsubscribeHeading: 'Stop this alert?',
    unsubscribeText: 'No more e-mails will be sent for it, and your address is deleted with it.',
    stoppedHeading: 'Your alert is stopped',
    stoppedText: 'No more e-mails will be sent for it. Your address was deleted with it (unless another alert of yours still uses it).',
    goneHeading: 'This link no longer works',
    goneText: 'The alert it belonged to has ended or was stopped, or the confirmation link has expired. You can ask for a new alert on the map.',
    wantsUp: 'when it is available again',
    wantsDown: 'when it goes down',
    map: 'Open the map at the station',
    mapHome: 'Open the map',
  },
  de: {
    title: 'Stationsbenachrichtigung',
    confirmHeading: 'Benachrichtigung bestätigen',
    confirmWhat: (what: string, station: string, when: string) => `Per E-Mail benachrichtigen, ${when}: ${what} an ${station}.`,
    confirmButton: 'Benachrichtigung einschalten',
    confirmedHeading: 'Ihre Benachrichtigung ist eingeschaltet',
    confirmedText: (until: string) => `Sie erhalten eine E-Mail je Statuswechsel wie gewünscht, sobald er eine Weile angehalten hat. Die Benachrichtigung läuft bis ${until}; in den E-Mails können Sie sie verlängern oder beenden.`,
    manageHeading: 'Ihre Benachrichtigung',
    manageWhat: (what: string, station: string, when: string) => `E-Mail, ${when}: ${what} an ${station}.`,
    runsUntil: (until: string) => `Sie läuft bis ${until}.`,
    pendingText: 'Sie ist noch nicht bestätigt: Folgen Sie dem Link in der Bestätigungs-E-Mail.',
    renewButton: 'Benachrichtigung behalten',
    renewedHeading: 'Ihre Benachrichtigung bleibt bestehen',
    stopButton: 'Benachrichtigung beenden',
    unsubscribeHeading: 'Diese Benachrichtigung beenden?',
    unsubscribeText: 'Es werden keine E-Mails mehr dafür gesendet, und Ihre Adresse wird mit ihr gelöscht.',
    stoppedHeading: 'Ihre Benachrichtigung ist beendet',
    stoppedText: 'Es werden keine E-Mails mehr dafür gesendet. Ihre Adresse wurde mit ihr gelöscht (sofern keine andere Benachrichtigung sie noch nutzt).',
    goneHeading: 'Dieser Link gilt nicht mehr',
    goneText: 'Die Benachrichtigung ist abgelaufen oder wurde beendet, oder der Bestätigungslink ist abgelaufen. Auf der Karte können Sie eine neue anfordern.',
    wantsUp: 'sobald sie wieder verfügbar ist',
    wantsDown: 'sobald sie ausfällt',
    map: 'Karte bei der Station öffnen',
    mapHome: 'Karte öffnen',
  },
} as const;

/** The page's language: the alert's, else German when the visitor's first preference is, else English. */
export function pageLanguage(alert: AlertView | undefined, acceptLanguage: string | undefined): AlertLanguage {
  if (alert) return alert.language;
  return /^\s*de\b/i.test(acceptLanguage ?? '') ? 'de' : 'en';
}

/** The form every page's buttons post: to `action`, with the token as a hidden field. */
function form(action: string, token: string, button: string, kind: 'primary' | 'secondary'): string {
  return (
    `<form method="post" action="${escapeHtml(action)}">` +
    `<input type="hidden" name="token" value="${escapeHtml(token)}">` +
    `<button type="submit" class="${kind}">${escapeHtml(button)}</button></form>`
  );
}

function layout(language: AlertLanguage, heading: string, body: string): string {
  const w = WORDS[language];
  return [
    '<!DOCTYPE html>',
    `<html lang="${language}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    `<title>${escapeHtml(`${heading} · ${w.title}`)}</title>`,
    '<link rel="stylesheet" href="/map/alerts/alerts.css">',
    '</head>',
    '<body>',
    '<main>',
    `<h1>${escapeHtml(heading)}</h1>`,
    body,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

const describe = (alert: AlertView) => {
  const w = WORDS[alert.language];
  return {
    what: optionName(alert.language, alert.fuellingOption),
    station: `${alert.stationName} (${alert.hrsId})`,
    when: alert.wants === 'up' ? w.wantsUp : w.wantsDown,
    until: alert.expiresAt ? localTime(alert.expiresAt, knownTimeZone(alert.timeZone ?? undefined), alert.language) : '',
  };
};

const mapLink = (alert: AlertView) =>
  `<p><a href="/#/station/${encodeURIComponent(alert.hrsId)}">${escapeHtml(WORDS[alert.language].map)}</a></p>`;

/** The confirmation's page: what the alert is, and its button. */
export function confirmPage(alert: AlertView, secret: string): string {
  const w = WORDS[alert.language];
  const d = describe(alert);
  return layout(alert.language, w.confirmHeading, `<p>${escapeHtml(w.confirmWhat(d.what, d.station, d.when))}</p>\n${form('/map/alerts/confirm', secret, w.confirmButton, 'primary')}`);
}

export function confirmedPage(alert: AlertView): string {
  const w = WORDS[alert.language];
  const d = describe(alert);
  return layout(
    alert.language,
    w.confirmedHeading,
    `<p>${escapeHtml(w.confirmWhat(d.what, d.station, d.when))}</p>\n<p>${escapeHtml(w.confirmedText(d.until))}</p>\n${mapLink(alert)}`,
  );
}

/** The alert's page: what it is, until when, and its two buttons. */
export function managePage(alert: AlertView, heading?: 'renewed'): string {
  const w = WORDS[alert.language];
  const d = describe(alert);
  const state = alert.state === 'active' ? w.runsUntil(d.until) : w.pendingText;
  const buttons =
    (alert.state === 'active' ? form('/map/alerts/renew', alert.manageToken, w.renewButton, 'primary') : '') +
    form('/map/alerts/unsubscribe', alert.manageToken, w.stopButton, 'secondary');
  return layout(
    alert.language,
    heading === 'renewed' ? w.renewedHeading : w.manageHeading,
    `<p>${escapeHtml(w.manageWhat(d.what, d.station, d.when))}</p>\n<p>${escapeHtml(state)}</p>\n<div class="buttons">${buttons}</div>\n${mapLink(alert)}`,
  );
}

/** The unsubscribe link's page: the question and its button (a GET never unsubscribes). */
export function unsubscribePage(alert: AlertView): string {
  const w = WORDS[alert.language];
  const d = describe(alert);
  return layout(
    alert.language,
    w.unsubscribeHeading,
    `<p>${escapeHtml(w.manageWhat(d.what, d.station, d.when))}</p>\n<p>${escapeHtml(w.unsubscribeText)}</p>\n${form('/map/alerts/unsubscribe', alert.manageToken, w.stopButton, 'primary')}\n${mapLink(alert)}`,
  );
}

export function stoppedPage(alert: AlertView): string {
  const w = WORDS[alert.language];
  const d = describe(alert);
  return layout(alert.language, w.stoppedHeading, `<p>${escapeHtml(w.manageWhat(d.what, d.station, d.when))}</p>\n<p>${escapeHtml(w.stoppedText)}</p>\n${mapLink(alert)}`);
}

/** A link whose alert is gone (ended, stopped, or never confirmed in time). */
export function gonePage(language: AlertLanguage): string {
  const w = WORDS[language];
  return layout(language, w.goneHeading, `<p>${escapeHtml(w.goneText)}</p>\n<p><a href="/">${escapeHtml(w.mapHome)}</a></p>`);
}

/** The pages' style sheet (served as a file: the policy allows no inline style). */
export const ALERT_PAGE_CSS = `
:root { color-scheme: light dark; --accent: #0b57d0; --text: #1f2933; --muted: #52606d; --bg: #f4f5f7; --card: #ffffff; --line: #d8dde3; }
@media (prefers-color-scheme: dark) { :root { --accent: #8ab4f8; --text: #e4e7eb; --muted: #bcccdc; --bg: #12161b; --card: #1f252c; --line: #3e4c59; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
main { max-width: 36rem; margin: 2rem auto; padding: 1.5rem; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
.buttons { display: flex; flex-wrap: wrap; gap: 0.75rem; margin-bottom: 1rem; }
form { margin: 0 0 1rem; }
.buttons form { margin: 0; }
button { font: inherit; min-height: 44px; padding: 0.5rem 1.1rem; border-radius: 6px; cursor: pointer; }
button.primary { background: var(--accent); color: var(--card); border: 1px solid var(--accent); }
button.secondary { background: transparent; color: var(--text); border: 1px solid var(--muted); }
button:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
@media (max-width: 40rem) { main { margin: 0; border-radius: 0; border-width: 0 0 1px; } }
`;

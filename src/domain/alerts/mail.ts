import { knownTimeZone, message, oneLine, subjectName, type Block, type MailFrame, type MailMessage } from '../mail-layout.js';
import type { Side, WantedSide } from './sides.js';
import { localTime, optionName, type AlertLanguage } from './words.js';

/**
 * The driver alerts' e-mails, in the driver's language, times in the station's own zone:
 * - the confirmation (double opt-in): the link that turns the alert on, sent once per request;
 * - a transition: the wanted side has held for the settle time (one message per transition);
 * - the reminder: the alert ends soon unless it is kept.
 * Every message after the confirmation carries the alert's links: the map at the station, the page
 * that manages the alert (keep it longer, or stop it) and the one-click unsubscribe (RFC 8058, also as
 * the `List-Unsubscribe` headers the mail worker adds).
 */

export interface AlertMailStation {
  hrsId: string;
  name: string;
  timeZone: string | null;
}

export interface AlertMailLinks {
  /** The map opened at the station. */
  map: string;
  /** The alert's page: keep it longer, or stop it. */
  manage: string;
  /** The one-click unsubscribe (GET shows a page with the button; POST unsubscribes). */
  unsubscribe: string;
}

export interface AlertMailInput {
  email: string;
  language: AlertLanguage;
  station: AlertMailStation;
  fuellingOption: string;
  wants: WantedSide;
}

const W = {
  en: {
    wantsUp: 'when it is available again',
    wantsDown: 'when it goes down',
    confirmSubject: (what: string, station: string) => `Confirm your alert: ${what} at ${station}`,
    confirmIntro: (what: string, station: string, when: string) => [`You asked to be told by e-mail ${when}: `, { strong: what }, ` at `, { strong: station }, '.'],
    confirmAction: 'To turn the alert on, open this link and confirm:',
    confirmUntil: (until: string) => `The link works until ${until}. If you did not ask for this, ignore this e-mail: nothing is sent unless the alert is confirmed, and the address is deleted with the unconfirmed alert.`,
    upSubject: (what: string, station: string) => `${what} at ${station} is available again`,
    downSubject: (what: string, station: string) => `${what} at ${station} is down`,
    upIntro: (what: string, station: string) => [{ strong: what }, ' at ', { strong: station }, ' is available again.'],
    downIntro: (what: string, station: string) => [{ strong: what }, ' at ', { strong: station }, ' is no longer available.'],
    held: (minutes: string) => `It has been so for ${minutes} (the alert waits that long so that a short change sends nothing).`,
    station: 'Station',
    option: 'Fuelling option',
    status: 'Status',
    since: 'Since',
    until: 'Alert runs until',
    statusUp: 'available',
    statusDown: 'unavailable',
    map: 'See it on the map:',
    manage: 'Keep the alert longer, or stop it:',
    unsubscribe: 'Stop it now with one click:',
    expiringSubject: (what: string, station: string) => `Your alert for ${what} at ${station} ends soon`,
    expiringIntro: (what: string, station: string, until: string) => ['Your alert for ', { strong: what }, ' at ', { strong: station }, ` ends on ${until}.`],
    expiringAction: 'To keep it for another period, open this page and choose "Keep the alert":',
    footer: (email: string) =>
      `This e-mail was sent to ${email} because an alert was asked for and confirmed with this address on the HRS map. ` +
      'The address is kept only while the alert lives, and deleted when it ends or is stopped.',
    footerConfirm: (email: string) => `This e-mail was sent to ${email} because an alert was asked for with this address on the HRS map.`,
  },
  de: {
    wantsUp: 'sobald sie wieder verfügbar ist',
    wantsDown: 'sobald sie ausfällt',
    confirmSubject: (what: string, station: string) => `Bitte bestätigen Sie Ihre Benachrichtigung: ${what} an ${station}`,
    confirmIntro: (what: string, station: string, when: string) => ['Sie möchten per E-Mail benachrichtigt werden, ', when, ': ', { strong: what }, ' an ', { strong: station }, '.'],
    confirmAction: 'Um die Benachrichtigung einzuschalten, öffnen Sie diesen Link und bestätigen Sie:',
    confirmUntil: (until: string) => `Der Link gilt bis ${until}. Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne Bestätigung wird nichts gesendet, und die Adresse wird mit der unbestätigten Benachrichtigung gelöscht.`,
    upSubject: (what: string, station: string) => `${what} an ${station} ist wieder verfügbar`,
    downSubject: (what: string, station: string) => `${what} an ${station} ist ausgefallen`,
    upIntro: (what: string, station: string) => [{ strong: what }, ' an ', { strong: station }, ' ist wieder verfügbar.'],
    downIntro: (what: string, station: string) => [{ strong: what }, ' an ', { strong: station }, ' ist nicht mehr verfügbar.'],
    held: (minutes: string) => `Das gilt seit ${minutes} (so lange wartet die Benachrichtigung, damit eine kurze Änderung nichts auslöst).`,
    station: 'Station',
    option: 'Betankungsoption',
    status: 'Status',
    since: 'Seit',
    until: 'Benachrichtigung läuft bis',
    statusUp: 'verfügbar',
    statusDown: 'nicht verfügbar',
    map: 'Auf der Karte ansehen:',
    manage: 'Benachrichtigung verlängern oder beenden:',
    unsubscribe: 'Jetzt mit einem Klick beenden:',
    expiringSubject: (what: string, station: string) => `Ihre Benachrichtigung für ${what} an ${station} endet bald`,
    expiringIntro: (what: string, station: string, until: string) => ['Ihre Benachrichtigung für ', { strong: what }, ' an ', { strong: station }, ` endet am ${until}.`],
    expiringAction: 'Um sie für einen weiteren Zeitraum zu behalten, öffnen Sie diese Seite und wählen Sie „Benachrichtigung behalten“:',
    footer: (email: string) =>
      `Diese E-Mail ging an ${email}, weil mit dieser Adresse auf der HRS-Karte eine Benachrichtigung angefordert und bestätigt wurde. ` +
      'Die Adresse wird nur gespeichert, solange die Benachrichtigung besteht, und gelöscht, wenn sie endet oder beendet wird.',
    footerConfirm: (email: string) => `Diese E-Mail ging an ${email}, weil mit dieser Adresse auf der HRS-Karte eine Benachrichtigung angefordert wurde.`,
  },
} as const;

type Words = (typeof W)[AlertLanguage];

const stationLabel = (s: AlertMailStation) => `${oneLine(s.name)} (${s.hrsId})`;

function frameOf(language: AlertLanguage, footer: (email: string) => string): MailFrame {
  return { language, footer: (recipient) => footer(oneLine(recipient.email)) };
}

/** A settle time in words: `10 minutes`, `90 seconds` / `10 Minuten`. */
export function settleWords(settleMs: number, language: AlertLanguage): string {
  const seconds = Math.round(settleMs / 1000);
  const minutes = seconds % 60 === 0 ? seconds / 60 : undefined;
  if (language === 'de') return minutes !== undefined ? `${minutes} ${minutes === 1 ? 'Minute' : 'Minuten'}` : `${seconds} Sekunden`;
  return minutes !== undefined ? `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}` : `${seconds} seconds`;
}

function links(w: Words, l: AlertMailLinks): Block[] {
  return [
    { paragraph: [w.map, ' ', { href: l.map, label: l.map }] },
    { paragraph: [w.manage, ' ', { href: l.manage, label: l.manage }] },
    { paragraph: [w.unsubscribe, ' ', { href: l.unsubscribe, label: l.unsubscribe }] },
  ];
}

/** The confirmation: the link (`confirm`) that turns the alert on, valid until `until`. */
export function renderAlertConfirmation(input: AlertMailInput & { confirm: string; until: Date }): MailMessage {
  const w = W[input.language];
  const zone = knownTimeZone(input.station.timeZone ?? undefined);
  const what = optionName(input.language, input.fuellingOption);
  const station = stationLabel(input.station);
  const blocks: Block[] = [
    { paragraph: w.confirmIntro(what, station, input.wants === 'up' ? w.wantsUp : w.wantsDown) },
    { paragraph: [w.confirmAction, ' ', { href: input.confirm, label: input.confirm }] },
    { paragraph: [w.confirmUntil(localTime(input.until, zone, input.language))] },
  ];
  return message(w.confirmSubject(subjectName(what), subjectName(input.station.name)), { name: null, email: input.email }, blocks, frameOf(input.language, w.footerConfirm));
}

/** A transition: the option's status settled on the wanted side at `since` (after `settleMs`). */
export function renderAlertTransition(input: AlertMailInput & { side: Side; since: Date; settleMs: number; expiresAt: Date; links: AlertMailLinks }): MailMessage {
  const w = W[input.language];
  const zone = knownTimeZone(input.station.timeZone ?? undefined);
  const what = optionName(input.language, input.fuellingOption);
  const station = stationLabel(input.station);
  const up = input.side === 'up';
  const blocks: Block[] = [
    { paragraph: up ? w.upIntro(what, station) : w.downIntro(what, station) },
    {
      facts: [
        [w.station, [station]],
        [w.option, [what]],
        [w.status, [up ? w.statusUp : w.statusDown]],
        [w.since, [localTime(input.since, zone, input.language)]],
        [w.until, [localTime(input.expiresAt, zone, input.language)]],
      ],
    },
    { paragraph: [w.held(settleWords(input.settleMs, input.language))] },
    ...links(w, input.links),
  ];
  const subject = up ? w.upSubject(subjectName(what), subjectName(input.station.name)) : w.downSubject(subjectName(what), subjectName(input.station.name));
  return message(subject, { name: null, email: input.email }, blocks, frameOf(input.language, w.footer));
}

/** The reminder: the alert ends at `expiresAt` unless kept. */
export function renderAlertExpiring(input: AlertMailInput & { expiresAt: Date; links: AlertMailLinks }): MailMessage {
  const w = W[input.language];
  const zone = knownTimeZone(input.station.timeZone ?? undefined);
  const what = optionName(input.language, input.fuellingOption);
  const station = stationLabel(input.station);
  const blocks: Block[] = [
    { paragraph: w.expiringIntro(what, station, localTime(input.expiresAt, zone, input.language)) },
    { paragraph: [w.expiringAction, ' ', { href: input.links.manage, label: input.links.manage }] },
    { paragraph: [w.map, ' ', { href: input.links.map, label: input.links.map }] },
    { paragraph: [w.unsubscribe, ' ', { href: input.links.unsubscribe, label: input.links.unsubscribe }] },
  ];
  return message(w.expiringSubject(subjectName(what), subjectName(input.station.name)), { name: null, email: input.email }, blocks, frameOf(input.language, w.footer));
}

/** The alert's links under the platform's base URL (`manage_token`: the alert's own secret). */
export function alertLinks(baseUrl: string, hrsId: string, manageToken: string): AlertMailLinks {
  const token = encodeURIComponent(manageToken);
  return {
    map: `${baseUrl}/#/station/${encodeURIComponent(hrsId)}`,
    manage: `${baseUrl}/map/alerts/manage?token=${token}`,
    unsubscribe: `${baseUrl}/map/alerts/unsubscribe?token=${token}`,
  };
}

/** The headers of RFC 8058's one-click unsubscribe (and RFC 2369's `List-Unsubscribe`). */
export function unsubscribeHeaders(links: AlertMailLinks): Record<string, string> {
  return { 'List-Unsubscribe': `<${links.unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

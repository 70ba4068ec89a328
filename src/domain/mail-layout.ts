/**
 * How the platform's e-mails look: a subject, a plain-text body and a small self-contained HTML
 * document saying the same, made from paragraphs and tables of facts, with the same greeting,
 * signature and footer. What each e-mail says is in ./token-mail.ts.
 */

/** An e-mail ready to send. */
export interface MailMessage {
  subject: string;
  text: string;
  html: string;
}

/** Who an e-mail is for; without a name, the greeting is a plain `Hello,`. */
export interface MailRecipient {
  name: string | null;
  email: string;
}

/** Text made safe to place in HTML, between tags or in a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ENTITIES[char]!);
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * An instant as the e-mails state it, in a time zone: `Tuesday 23 February 2027, 14:05 UTC`
 * (24-hour clock; the zone's short name, `CET`, `BST` or `GMT-5`). Throws a RangeError for a zone
 * Intl does not know.
 */
export function formatInstant(date: Date, timeZone: string): string {
  const parts = formatterIn(timeZone).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('weekday')} ${part('day')} ${part('month')} ${part('year')}, ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
}

/** One formatter per zone, made on first use: making one costs far more than using it. */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatterIn(timeZone: string): Intl.DateTimeFormat {
  let formatter = FORMATTERS.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZone,
      timeZoneName: 'short',
    });
    // Zones come from the configuration and the callers: a handful; the bound only guards against misuse.
    if (FORMATTERS.size < 1000) FORMATTERS.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone asked for when Intl knows it, else UTC (the e-mail then says UTC, so it never misleads). */
export function knownTimeZone(timeZone: string | undefined): string {
  if (!timeZone) return 'UTC';
  try {
    formatterIn(timeZone);
    return timeZone;
  } catch {
    return 'UTC';
  }
}

/** A part of a sentence: text, text in bold, or a link. */
export type Inline = string | { strong: string } | { href: string; label: string };

/** A part of an e-mail: a paragraph, or a list of labelled facts (shown as a small table). */
export type Block = { paragraph: Inline[] } | { facts: [label: string, value: Inline[]][] };


/** A subject on one line, a long token name shortened in it (the body gives it whole). */
export function subjectName(name: string): string {
  const line = oneLine(name);
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
}

function isWebLink(href: string): boolean {
  return /^https?:\/\//i.test(href);
}

function inlineText(inline: Inline): string {
  if (typeof inline === 'string') return inline;
  if ('strong' in inline) return inline.strong;
  return inline.label === inline.href ? inline.href : `${inline.label} (${inline.href})`;
}

function inlineHtml(inline: Inline): string {
  if (typeof inline === 'string') return escapeHtml(inline);
  if ('strong' in inline) return `<strong>${escapeHtml(inline.strong)}</strong>`;
  // Only web links become anchors; anything else is shown as text, never followed.
  if (!isWebLink(inline.href)) return escapeHtml(inlineText(inline));
  return `<a href="${escapeHtml(inline.href)}" style="color:#0b57d0;text-decoration:underline;word-break:break-all;">${escapeHtml(inline.label)}</a>`;
}

/**
 * What frames an e-mail besides its blocks: its language (the greeting, the signature, the HTML's
 * `lang`) and its footer. The token and webhook e-mails are in English with the token footer; the
 * driver alerts' (./alerts/mail.ts) in the driver's language with their own.
 */
export interface MailFrame {
  language: 'en' | 'de';
  footer: (recipient: MailRecipient) => string;
}

const TOKEN_FRAME: MailFrame = {
  language: 'en',
  footer: (recipient) =>
    `This e-mail was sent to ${oneLine(recipient.email)}. ` + "The HRS signal platform never sends a token's value by e-mail and never asks you for it.",
};

const FRAME_WORDS = {
  en: { hello: 'Hello', signature: 'The HRS signal platform', htmlLang: 'en-GB' },
  de: { hello: 'Hallo', signature: 'Die HRS-Signalplattform', htmlLang: 'de-DE' },
} as const;

function greeting(recipient: MailRecipient, frame: MailFrame): string {
  const name = oneLine(recipient.name ?? '');
  const hello = FRAME_WORDS[frame.language].hello;
  return name ? `${hello} ${name},` : `${hello},`;
}

function renderText(recipient: MailRecipient, blocks: Block[], frame: MailFrame): string {
  const sections = blocks.map((block) => {
    if ('paragraph' in block) return block.paragraph.map(inlineText).join('');
    const width = Math.max(...block.facts.map(([label]) => label.length)) + 1;
    return block.facts.map(([label, value]) => `  ${`${label}:`.padEnd(width)} ${value.map(inlineText).join('')}`).join('\n');
  });
  return [greeting(recipient, frame), ...sections, FRAME_WORDS[frame.language].signature, frame.footer(recipient)].join('\n\n') + '\n';
}

const P_STYLE = 'margin:0 0 16px;';

function renderHtml(subject: string, recipient: MailRecipient, blocks: Block[], frame: MailFrame): string {
  const body = blocks.map((block) => {
    if ('paragraph' in block) return `<p style="${P_STYLE}">${block.paragraph.map(inlineHtml).join('')}</p>`;
    const rows = block.facts.map(
      ([label, value]) =>
        `<tr><th scope="row" style="text-align:left;vertical-align:top;padding:4px 16px 4px 0;font-weight:bold;white-space:nowrap;">${escapeHtml(label)}</th>` +
        `<td style="vertical-align:top;padding:4px 0;">${value.map(inlineHtml).join('')}</td></tr>`,
    );
    return `<table role="presentation" style="border-collapse:collapse;margin:0 0 16px;font-size:15px;">\n${rows.join('\n')}\n</table>`;
  });
  return [
    '<!DOCTYPE html>',
    `<html lang="${FRAME_WORDS[frame.language].htmlLang}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(subject)}</title>`,
    '</head>',
    '<body style="margin:0;padding:0;background-color:#f4f5f7;">',
    '<div style="max-width:560px;margin:0 auto;padding:24px 16px;font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#1f2933;">',
    '<div style="background-color:#ffffff;border:1px solid #d8dde3;border-radius:6px;padding:24px;">',
    `<p style="${P_STYLE}">${escapeHtml(greeting(recipient, frame))}</p>`,
    ...body,
    `<p style="margin:0;">${escapeHtml(FRAME_WORDS[frame.language].signature)}</p>`,
    '</div>',
    `<p style="margin:16px 0 0;font-size:12px;color:#616e7c;">${escapeHtml(frame.footer(recipient))}</p>`,
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** An e-mail of blocks, framed by `withFrame` (the token e-mails' English frame unless given). */
export function message(subject: string, recipient: MailRecipient, blocks: Block[], withFrame: MailFrame = TOKEN_FRAME): MailMessage {
  const line = oneLine(subject);
  return { subject: line, text: renderText(recipient, blocks, withFrame), html: renderHtml(line, recipient, blocks, withFrame) };
}

/**
 * Token values and the token e-mails.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import t from 'tap';
import { escapeHtml, formatInstant, MAIL_KINDS, type MailKind, type MailMessage, renderRevealMail, renderSignInMail, renderTokenMail, TOKEN_MAIL_KINDS, type TokenMailInput } from '../../src/domain/token-mail.js';
import { REMINDER_DAYS, REMINDER_OFFSETS_MS, reminderKey, reminderSchedule } from '../../src/domain/token-reminders.js';
import { BASE62_ALPHABET, checkExpiry, crc32, defaultExpiry, expiryBounds, isWellFormedToken, mayCreatePersonalToken, newTokenValue, TOKEN_BODY_LENGTH, TOKEN_CHECKSUM_LENGTH, TOKEN_PREFIXES, tokenChecksum, tokenHint, tooManyTokensMessage } from '../../src/domain/token-values.js';
import { type Generation, GENERATIONS } from '../../src/domain/vocabulary.js';
import { tokenAuth } from '../../src/api/auth.js';
import { TOKEN_MESSAGES, type TokenRecord } from '../../src/domain/tokens.js';
import { runs } from '../helpers/scale.js';

t.test('token-values', async (t) => {
  /**
   * Token values: prefix, body and checksum, well formed whatever the random bytes; any one character
   * changed is caught offline; the hint; personal tokens' expiry bounds at their edges and the limit
   * on how many a user holds.
   */
  const DAY = 24 * 60 * 60 * 1000;
  const NOW = new Date('2026-11-22T10:00:00.000Z');
  const later = (ms: number) => new Date(NOW.getTime() + ms);

  const generation = fc.constantFrom(...GENERATIONS);
  const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 });
  const fixed = (bytes: Uint8Array) => () => bytes;
  const valueOf = fc.tuple(generation, bytes32).map(([g, b]) => ({ generation: g, value: newTokenValue(g, fixed(b)) }));

  t.test('crc32 is the standard CRC32', async (t) => {
    t.equal(crc32('123456789'), 0xcbf43926, 'the check value');
    t.equal(crc32(''), 0);
    t.equal(crc32(new Uint8Array([0])), 0xd202ef8d);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => crc32(bytes) === zlibCrc32(bytes)),
      { numRuns: runs(500) },
    );
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (text) => crc32(text) === zlibCrc32(text)));
  });

  t.test('the prefixes', async (t) => {
    const spec = { export_v2: 'hrs_pat_', export_v1: 'hrs_exp1_', import_v2: 'hrs_imp2_', import_v1: 'hrs_imp1_' };
    for (const [g, prefix] of Object.entries(spec)) {
      const value = newTokenValue(g as Generation);
      t.ok(value.startsWith(prefix), `a new ${g} token starts with ${prefix} (${value.slice(0, prefix.length)})`);
      t.equal(isWellFormedToken(value), g, `and is told apart as ${g}`);
    }
    const prefixes = Object.values(TOKEN_PREFIXES);
    for (const a of prefixes) {
      for (const b of prefixes) if (a !== b) t.notOk(a.startsWith(b), `${a} does not start with ${b}`);
    }
  });

  t.test('concrete values', async (t) => {
    const zeros = newTokenValue('export_v2', fixed(new Uint8Array(32)));
    const body = '0'.repeat(43);
    t.equal(zeros, `hrs_pat_${body}${tokenChecksum(`hrs_pat_${body}`)}`, 'all-zero bytes give an all-zero body');
    t.equal(isWellFormedToken(zeros), 'export_v2');

    const ones = newTokenValue('import_v1', fixed(new Uint8Array(32).fill(0xff)));
    t.equal(ones.length, 'hrs_imp1_'.length + 43 + 6);
    t.equal(isWellFormedToken(ones), 'import_v1', 'the largest body still fits in 43 characters');
    t.equal(ones.slice(9, 52), base62(2n ** 256n - 1n).padStart(43, '0'), 'the body is 2^256 − 1 in base62');

    const crc = crc32(zeros.slice(0, -6));
    t.equal(zeros.slice(-6), base62(BigInt(crc)).padStart(6, '0'), 'the checksum is the CRC32 of prefix and body, in base62');

    const real = newTokenValue('export_v1');
    t.match(real, /^hrs_exp1_[0-9A-Za-z]{49}$/);
    t.equal(isWellFormedToken(real), 'export_v1', 'with the default random source');
    t.not(newTokenValue('export_v1'), real, 'two values differ');
  });

  t.test('a random source giving the wrong number of bytes is refused', async (t) => {
    t.throws(() => newTokenValue('export_v2', () => new Uint8Array(31)), /31 bytes, not 32/);
    t.throws(() => newTokenValue('export_v2', () => new Uint8Array(33)), /33 bytes, not 32/);
  });

  t.test('values are well formed, whatever the generation and bytes', async () => {
    fc.assert(
      fc.property(generation, bytes32, (g, bytes) => {
        const value = newTokenValue(g, fixed(bytes));
        const prefix = TOKEN_PREFIXES[g];
        return (
          value.startsWith(prefix) &&
          value.length === prefix.length + TOKEN_BODY_LENGTH + TOKEN_CHECKSUM_LENGTH &&
          [...value.slice(prefix.length)].every((c) => BASE62_ALPHABET.includes(c)) &&
          isWellFormedToken(value) === g
        );
      }),
      { numRuns: runs(1000) },
    );
  });

  t.test('different bytes give different bodies', async () => {
    fc.assert(
      fc.property(generation, bytes32, bytes32, (g, a, b) => {
        fc.pre(Buffer.compare(a, b) !== 0);
        return newTokenValue(g, fixed(a)).slice(0, -6) !== newTokenValue(g, fixed(b)).slice(0, -6);
      }),
    );
  });

  t.test('any single character changed is caught', async () => {
    const anyChar = fc.oneof(fc.constantFrom(...BASE62_ALPHABET), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }));
    fc.assert(
      fc.property(valueOf, fc.nat(), anyChar, ({ value }, at, char) => {
        const i = at % value.length;
        fc.pre(value[i] !== char);
        const changed = value.slice(0, i) + char + value.slice(i + 1);
        return isWellFormedToken(changed) === undefined;
      }),
      { numRuns: runs(3000) },
    );
  });

  t.test('a prefix changed to another generation is caught', async () => {
    fc.assert(
      fc.property(valueOf, generation, ({ generation: g, value }, other: Generation) => {
        fc.pre(other !== g);
        const moved = TOKEN_PREFIXES[other] + value.slice(TOKEN_PREFIXES[g].length);
        return isWellFormedToken(moved) === undefined;
      }),
    );
  });

  t.test('malformed values are refused', async (t) => {
    const good = newTokenValue('import_v2', fixed(new Uint8Array(32).fill(7)));
    const cases: Record<string, string> = {
      empty: '',
      'the prefix alone': 'hrs_imp2_',
      'an unknown prefix': 'hrs_xyz_' + good.slice(9),
      'no prefix': good.slice(9),
      'one character short': good.slice(0, -1),
      'one character more': good + 'A',
      'a character outside the alphabet': good.slice(0, 20) + '-' + good.slice(21),
      'the sandbox token': 'hrs-sandbox-v1.1-public',
      'upper-case prefix': good.toUpperCase(),
      'white space around': ` ${good} `,
    };
    for (const [what, value] of Object.entries(cases)) t.equal(isWellFormedToken(value), undefined, what);
    t.equal(isWellFormedToken(good), 'import_v2');
    t.equal(isWellFormedToken(undefined as unknown as string), undefined, 'not a string');

    // A 43-character body above 2^256 − 1 cannot come from 32 bytes, even with its right checksum.
    const tooBig = 'hrs_imp2_' + 'z'.repeat(43);
    t.equal(isWellFormedToken(tooBig + tokenChecksum(tooBig)), undefined, 'a body 32 bytes cannot make');
  });

  t.test('random strings are not well formed', async () => {
    fc.assert(
      fc.property(generation, fc.stringMatching(/^[0-9A-Za-z]{49}$/), (g, rest) => {
        const value = TOKEN_PREFIXES[g] + rest;
        fc.pre(rest.slice(43) !== tokenChecksum(TOKEN_PREFIXES[g] + rest.slice(0, 43)));
        return isWellFormedToken(value) === undefined;
      }),
    );
  });

  t.test('the hint is the last four characters', async (t) => {
    t.equal(tokenHint('hrs_pat_abcdefWXYZ'), 'WXYZ');
    fc.assert(
      fc.property(valueOf, ({ value }) => {
        const hint = tokenHint(value);
        return hint.length === 4 && value.endsWith(hint) && [...hint].every((c) => BASE62_ALPHABET.includes(c));
      }),
    );
  });

  t.test('expiry bounds at their edges', async (t) => {
    t.equal(checkExpiry(later(DAY), NOW), null, 'exactly 1 day is allowed');
    t.equal(checkExpiry(later(366 * DAY), NOW), null, 'exactly 366 days is allowed');
    t.equal(checkExpiry(later(90 * DAY), NOW), null);
    t.equal(
      checkExpiry(later(DAY - 1), NOW),
      'expires_at: must be at least 1 day from now (got 2026-11-23T09:59:59.999Z; the earliest allowed is 2026-11-23T10:00:00.000Z)',
    );
    t.equal(
      checkExpiry(later(366 * DAY + 1), NOW),
      'expires_at: must be at most 366 days from now (got 2027-11-23T10:00:00.001Z; the latest allowed is 2027-11-23T10:00:00.000Z)',
    );
    t.match(checkExpiry(NOW, NOW), /^expires_at: must be at least 1 day from now \(got 2026-11-22T10:00:00\.000Z;/);
    t.match(checkExpiry(later(-DAY), NOW), /at least 1 day/, 'in the past');
    t.equal(checkExpiry(new Date(Number.NaN), NOW), 'expires_at: must be a valid date and time');
    t.same(expiryBounds(NOW), { earliest: later(DAY), latest: later(366 * DAY) });
    t.same(defaultExpiry(NOW), new Date('2027-02-20T10:00:00.000Z'));
    t.equal(checkExpiry(defaultExpiry(NOW), NOW), null, 'the default expiry is allowed');

    fc.assert(
      fc.property(fc.integer({ min: -400 * DAY, max: 400 * DAY }), (offset) => {
        const allowed = offset >= DAY && offset <= 366 * DAY;
        return (checkExpiry(later(offset), NOW) === null) === allowed;
      }),
      { numRuns: runs(1000) },
    );
  });

  t.test('how many active personal tokens a user may hold', async (t) => {
    t.ok(mayCreatePersonalToken(0));
    t.ok(mayCreatePersonalToken(4));
    t.notOk(mayCreatePersonalToken(5));
    t.notOk(mayCreatePersonalToken(6));
    t.equal(
      tooManyTokensMessage(5),
      'You already have 5 active personal tokens, the most allowed: revoke one or let one expire before creating another.',
    );
    t.equal(
      tooManyTokensMessage(7),
      'You already have 7 active personal tokens and at most 5 are allowed: revoke 3 or let them expire before creating another.',
    );
  });

  function base62(value: bigint): string {
    let out = '';
    let rest = value;
    do {
      out = BASE62_ALPHABET[Number(rest % 62n)] + out;
      rest /= 62n;
    } while (rest > 0n);
    return out;
  }
});

t.test('token-mail', async (t) => {
  /**
   * The e-mails token owners receive: what each says, times stated in the recipient's zone, values
   * escaped in the HTML, a token's value never in any of them; and when the expiry reminders are due.
   */
  const SECOND = 1000;
  const HOUR = 60 * 60 * SECOND;
  const DAY = 24 * HOUR;
  const PORTAL = 'https://portal.example.org/account/tokens';
  const ADA = { name: 'Ada', email: 'ada@example.org' };
  const CREATED = new Date('2026-11-25T14:05:00.000Z');
  const EXPIRES = new Date('2027-02-23T14:05:00.000Z');
  const LAPTOP = { name: 'laptop', hint: 'Xy7Q', createdAt: CREATED, expiresAt: EXPIRES };

  const mail = (input: Partial<TokenMailInput> & Pick<TokenMailInput, 'kind'>): MailMessage =>
    renderTokenMail({ recipient: ADA, token: LAPTOP, portalUrl: PORTAL, ...input });

  /** The text and HTML of a message, each checked alike. */
  const bodies = (m: MailMessage) => [m.text, m.html];

  t.test('formatInstant: date, time and zone, in the zone asked for', async (t) => {
    t.equal(formatInstant(new Date('2027-02-23T14:05:00Z'), 'UTC'), 'Tuesday 23 February 2027, 14:05 UTC');
    t.equal(formatInstant(new Date('2027-02-23T14:05:00Z'), 'Europe/Berlin'), 'Tuesday 23 February 2027, 15:05 CET');
    t.equal(formatInstant(new Date('2027-07-23T14:05:00Z'), 'Europe/Berlin'), 'Friday 23 July 2027, 16:05 CEST');
    t.equal(formatInstant(new Date('2027-07-23T14:05:00Z'), 'Europe/London'), 'Friday 23 July 2027, 15:05 BST');
    t.equal(formatInstant(new Date('2027-02-23T03:30:00Z'), 'America/New_York'), 'Monday 22 February 2027, 22:30 GMT-5', 'the day before, there');
    t.equal(formatInstant(new Date('2027-02-23T00:05:00Z'), 'UTC'), 'Tuesday 23 February 2027, 00:05 UTC', 'midnight on a 24-hour clock');
    t.throws(() => formatInstant(EXPIRES, 'Mars/Olympus_Mons'), RangeError, 'an unknown zone');
  });

  t.test('escapeHtml', async (t) => {
    t.equal(escapeHtml(`<script>alert("x" & 'y')</script>`), '&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;');
    t.equal(escapeHtml('plain … text'), 'plain … text');
    t.equal(escapeHtml('&amp;'), '&amp;amp;', 'escapes what looks escaped already');
  });

  t.test('the kinds', async (t) => {
    t.same(TOKEN_MAIL_KINDS, ['created', 'revoked', 'expiring']);
    t.same(MAIL_KINDS, ['created', 'revoked', 'expiring', 'sign_in', 'reveal']);
  });

  t.test('created', async (t) => {
    const m = mail({ kind: 'created' });
    t.equal(m.subject, 'Your HRS API token "laptop" was created');
    t.match(m.text, /^Hello Ada,\n/);
    t.match(m.text, 'Token:   "laptop" (…Xy7Q)');
    t.match(m.text, 'Created: Wednesday 25 November 2026, 14:05 UTC');
    t.match(m.text, 'Expires: Tuesday 23 February 2027, 14:05 UTC');
    t.match(m.text, `If this was not you, revoke it at once on the API tokens page (${PORTAL}) and tell the platform contact`);
    t.match(m.html, `<a href="${PORTAL}"`);
    t.match(m.html, '<strong>&quot;laptop&quot;</strong> (…Xy7Q)');

    const forever = mail({ kind: 'created', token: { ...LAPTOP, expiresAt: null } });
    t.match(forever.text, 'Expires: Never: this token does not expire');
    t.match(forever.html, 'this token does not expire');

    const berlin = mail({ kind: 'created', timeZone: 'Europe/Berlin' });
    t.match(berlin.text, 'Expires: Tuesday 23 February 2027, 15:05 CET');
    const unknown = mail({ kind: 'created', timeZone: 'Nowhere/Special' });
    t.match(unknown.text, 'Expires: Tuesday 23 February 2027, 14:05 UTC', 'an unknown zone: UTC, and the e-mail says so');

    const nameless = renderTokenMail({ kind: 'created', recipient: { name: null, email: 'x@example.org' }, token: LAPTOP, portalUrl: PORTAL });
    t.match(nameless.text, /^Hello,\n/);
    t.match(nameless.text, 'This e-mail was sent to x@example.org.');
  });

  t.test('revoked', async (t) => {
    const byOwner = mail({ kind: 'revoked', revokedBy: 'owner' });
    t.equal(byOwner.subject, 'Your HRS API token "laptop" was revoked');
    t.match(byOwner.text, 'Your API token "laptop" (…Xy7Q) was revoked by you.');
    t.match(byOwner.text, 'Was to expire: Tuesday 23 February 2027, 14:05 UTC');
    t.match(byOwner.text, 'refused with 401 Unauthorized');
    t.match(byOwner.text, `create a new token on the API tokens page (${PORTAL})`);
    t.match(byOwner.text, 'If you did not revoke it, tell the platform contact');
    t.equal(mail({ kind: 'revoked' }).text, byOwner.text, 'the owner unless said');

    const byAdmin = mail({ kind: 'revoked', revokedBy: 'admin' });
    t.match(byAdmin.text, 'was revoked by a platform administrator.');
    t.notMatch(byAdmin.text, 'revoked by you');
    t.match(byAdmin.text, 'ask the platform contact');
    t.match(mail({ kind: 'revoked', token: { ...LAPTOP, expiresAt: null } }).text, 'this token did not expire');
  });

  t.test('expiring', async (t) => {
    const week = mail({ kind: 'expiring', daysLeft: 7 });
    t.equal(week.subject, 'Your HRS API token "laptop" expires in 7 days');
    t.match(week.text, 'Your API token "laptop" (…Xy7Q) expires in 7 days, on Tuesday 23 February 2027, 14:05 UTC.');
    t.match(week.text, 'refused with 401 Unauthorized');
    t.match(week.text, 'cannot be renewed and its value cannot be recovered');
    t.match(week.text, `create a new token on the API tokens page (${PORTAL}), put it in place of this one`);
    t.match(week.text, 'extend its expiry');
    t.equal(mail({ kind: 'expiring', daysLeft: 30 }).subject, 'Your HRS API token "laptop" expires in 30 days');
    t.equal(mail({ kind: 'expiring', daysLeft: 1 }).subject, 'Your HRS API token "laptop" expires in 1 day');
    t.equal(mail({ kind: 'expiring', daysLeft: 0 }).subject, 'Your HRS API token "laptop" expires today');
    t.throws(() => mail({ kind: 'expiring' }), /needs daysLeft/);
    t.throws(() => mail({ kind: 'expiring', daysLeft: 7, token: { ...LAPTOP, expiresAt: null } }), /needs a token with an expiry/);
    t.throws(() => mail({ kind: 'renamed' as 'created' }), /no token e-mail of kind renamed/);
  });

  t.test('subjects stay on one line and short', async (t) => {
    const m = mail({ kind: 'created', token: { ...LAPTOP, name: 'a\r\nBcc: victim@example.org' } });
    t.equal(m.subject, 'Your HRS API token "a Bcc: victim@example.org" was created');
    t.notMatch(m.text, /a\r?\nBcc/, 'nor does the name break a line of the body');
    const long = mail({ kind: 'created', token: { ...LAPTOP, name: 'x'.repeat(100) } });
    t.equal(long.subject, `Your HRS API token "${'x'.repeat(59)}…" was created`);
    t.match(long.text, `"${'x'.repeat(100)}"`, 'the body names it whole');
  });

  t.test('sign-in link', async (t) => {
    const link = 'https://portal.example.org/sign-in?code=abc&next=%2Ftokens';
    const m = renderSignInMail({ recipient: ADA, link, validMinutes: 15 });
    t.equal(m.subject, 'Your HRS sign-in link');
    t.match(m.text, `\n${link}\n`);
    t.match(m.text, 'It works once, and for 15 minutes');
    t.match(m.text, 'If you did not ask to sign in, ignore this e-mail');
    t.match(m.html, `<a href="${escapeHtml(link)}"`);
    t.match(renderSignInMail({ recipient: ADA, link, validMinutes: 1 }).text, 'for 1 minute from');
  });

  t.test('reveal link', async (t) => {
    const link = 'https://portal.example.org/reveal/3f9a';
    const m = renderRevealMail({
      recipient: ADA,
      link,
      tokenName: 'ingest <prod>',
      linkExpiresAt: new Date('2026-12-01T09:00:00Z'),
      timeZone: 'Europe/Berlin',
    });
    t.equal(m.subject, 'Your HRS API token "ingest <prod>" is ready');
    t.match(m.text, 'A platform administrator created the API token "ingest <prod>" for you.');
    t.match(m.text, 'The link works once, until Tuesday 1 December 2026, 10:00 CET.');
    t.match(m.text, 'ask the platform contact for a new one');
    t.match(m.html, '&quot;ingest &lt;prod&gt;&quot;');
    t.match(m.html, '<title>Your HRS API token &quot;ingest &lt;prod&gt;&quot; is ready</title>');
    t.notMatch(m.html, '<prod>');
    const utc = renderRevealMail({ recipient: ADA, link, tokenName: 'x', linkExpiresAt: new Date('2026-12-01T09:00:00Z') });
    t.match(utc.text, 'until Tuesday 1 December 2026, 09:00 UTC');
  });

  t.test('HTML: self-contained, inline-styled, every value escaped', async (t) => {
    const evil = '<script>alert(1)</script>';
    const m = renderTokenMail({
      kind: 'created',
      recipient: { name: `<img src=x onerror=alert(1)>`, email: `"><script>@example.org` },
      token: { ...LAPTOP, name: evil, hint: '<b>' },
      portalUrl: `${PORTAL}?a="><script>alert(1)</script>`,
    });
    t.notMatch(m.html, /<script/i);
    t.notMatch(m.html, /<img/i);
    t.notMatch(m.html, '<b>');
    t.match(m.html, '&lt;script&gt;alert(1)&lt;/script&gt;');
    t.match(m.html, `href="${PORTAL}?a=&quot;&gt;&lt;script&gt;`);
    t.match(m.html, /^<!DOCTYPE html>\n<html lang="en-GB">/);
    t.match(m.html, '<meta charset="utf-8">');
    for (const kind of TOKEN_MAIL_KINDS) {
      t.notMatch(mail({ kind, daysLeft: 7 }).html, /<style|<link|<img|<script|\ssrc=|url\(/i, `${kind}: no style sheet, nothing fetched`);
    }

    const sneaky = renderSignInMail({ recipient: ADA, link: 'javascript:alert(1)', validMinutes: 15 });
    t.notMatch(sneaky.html, /<a /, 'only web links become anchors');
    t.match(sneaky.html, 'javascript:alert(1)');
  });

  // Properties over every kind, any token value, name, zone and time.

  const ZONES = ['UTC', 'Europe/Berlin', 'Europe/London', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham'];
  const ALLOWED_TAGS = new Set(['!doctype', 'html', 'head', 'meta', 'title', 'body', 'div', 'p', 'table', 'tr', 'th', 'td', 'strong', 'a']);
  const nameChars = fc.constantFrom(...'abcXYZ019 -_.,:;/()[]<>&"\'é…ß€😀'.split(''), '<script>', '</script>', '&amp;');
  const tokenName = fc.string({ unit: nameChars, minLength: 1, maxLength: 12 }).filter((name) => name.trim() === name && name !== '');
  const instant = fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true });
  const tokenValue = fc
    .tuple(fc.constantFrom(...GENERATIONS), fc.uint8Array({ minLength: 32, maxLength: 32 }))
    .map(([generation, bytes]) => newTokenValue(generation, () => bytes));

  interface Rendered {
    kind: MailKind;
    message: MailMessage;
    name: string;
    hint: string | null;
    /** The instant the e-mail must state (expiry, or the reveal link's end), formatted; null: none. */
    stated: string | null;
    zone: string;
  }

  const rendered = fc
    .record({
      kind: fc.constantFrom(...MAIL_KINDS),
      value: tokenValue,
      name: tokenName,
      recipientName: fc.option(tokenName),
      createdAt: instant,
      expiresAt: fc.option(instant),
      zone: fc.constantFrom(...ZONES),
      revokedBy: fc.constantFrom('owner' as const, 'admin' as const),
      daysLeft: fc.constantFrom(30, 7, 1),
    })
    .map((r): Rendered & { value: string } => {
      const recipient = { name: r.recipientName, email: 'owner@example.org' };
      const hint = tokenHint(r.value);
      if (r.kind === 'sign_in') {
        const message = renderSignInMail({ recipient, link: 'https://portal.example.org/sign-in/abc', validMinutes: 15 });
        return { kind: r.kind, message, name: '', hint: null, stated: null, zone: 'UTC', value: r.value };
      }
      if (r.kind === 'reveal') {
        const linkExpiresAt = r.expiresAt ?? r.createdAt;
        const message = renderRevealMail({ recipient, link: 'https://portal.example.org/reveal/abc', tokenName: r.name, linkExpiresAt, timeZone: r.zone });
        return { kind: r.kind, message, name: r.name, hint: null, stated: formatInstant(linkExpiresAt, r.zone), zone: r.zone, value: r.value };
      }
      const expiresAt = r.kind === 'expiring' ? (r.expiresAt ?? new Date(r.createdAt.getTime() + 90 * DAY)) : r.expiresAt;
      const message = renderTokenMail({
        kind: r.kind,
        recipient,
        token: { name: r.name, hint, createdAt: r.createdAt, expiresAt },
        revokedBy: r.revokedBy,
        daysLeft: r.daysLeft,
        portalUrl: PORTAL,
        timeZone: r.zone,
      });
      return { kind: r.kind, message, name: r.name, hint, stated: expiresAt ? formatInstant(expiresAt, r.zone) : null, zone: r.zone, value: r.value };
    });

  t.test('no e-mail ever holds the token value', async () => {
    fc.assert(
      fc.property(rendered, ({ message, value }) =>
        [message.subject, message.text, message.html].every((part) => !part.includes(value) && !part.includes(value.slice(-49, -6))),
      ),
      { numRuns: runs(500) },
    );
  });

  t.test('every token e-mail names the token and states its expiry with its zone', async (t) => {
    const zoneName = (zone: string, at: Date) =>
      new Intl.DateTimeFormat('en-GB', { timeZone: zone, timeZoneName: 'short' }).formatToParts(at).find((p) => p.type === 'timeZoneName')!.value;
    fc.assert(
      fc.property(rendered, (r) => {
        if (r.kind === 'sign_in') return true;
        const [text, html] = bodies(r.message);
        const named = text!.includes(`"${r.name}"`) && html!.includes(escapeHtml(`"${r.name}"`));
        const hinted = r.hint === null || (text!.includes(`(…${r.hint})`) && html!.includes(`(…${escapeHtml(r.hint)})`));
        const stated = r.stated
          ? text!.includes(r.stated) && html!.includes(escapeHtml(r.stated))
          : /does not expire|did not expire/.test(text!) && /does not expire|did not expire/.test(html!);
        return named && hinted && stated;
      }),
      { numRuns: runs(500) },
    );
    t.ok(formatInstant(EXPIRES, 'Pacific/Chatham').endsWith(zoneName('Pacific/Chatham', EXPIRES)), 'the zone ends the stated instant');
    fc.assert(fc.property(instant, fc.constantFrom(...ZONES), (at, zone) => formatInstant(at, zone).endsWith(` ${zoneName(zone, at)}`)));
  });

  t.test('the HTML holds only its own tags, and the subject one line', async () => {
    fc.assert(
      fc.property(rendered, ({ message }) => {
        const tags = [...message.html.matchAll(/<\/?([!a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!.toLowerCase());
        return tags.every((tag) => ALLOWED_TAGS.has(tag)) && !/[\r\n]/.test(message.subject) && message.text.endsWith('\n');
      }),
      { numRuns: runs(500) },
    );
  });

  // The reminder schedule.

  const created = new Date('2026-11-22T10:00:00.000Z');
  const after = (ms: number) => new Date(created.getTime() + ms);
  const schedule = (expiresAt: Date | null, extra: { now?: Date; offsetsMs?: readonly [number, number] } = {}) =>
    reminderSchedule({ createdAt: created, expiresAt, now: extra.now ?? created, ...(extra.offsetsMs ? { offsetsMs: extra.offsetsMs } : {}) });

  t.test('reminders: 30 and 7 days before expiry, keyed by distance and expiry', async (t) => {
    const expiresAt = after(90 * DAY);
    t.same(schedule(expiresAt), [
      { daysBefore: 30, dueAt: after(60 * DAY), key: 'expiring:30:2027-02-20T10:00:00.000Z' },
      { daysBefore: 7, dueAt: after(83 * DAY), key: 'expiring:7:2027-02-20T10:00:00.000Z' },
    ]);
    t.equal(reminderKey(7, expiresAt), 'expiring:7:2027-02-20T10:00:00.000Z');
    t.same(schedule(expiresAt), schedule(expiresAt), 'the same token, the same keys');
  });

  t.test('reminders: edge cases', async (t) => {
    const days = (expiresAt: Date | null, now?: Date) => schedule(expiresAt, now ? { now } : {}).map((r) => r.daysBefore);
    t.same(days(null), [], 'no expiry, no reminders');
    t.same(days(after(7 * DAY)), [], 'exactly 7 days to run: the 7-day reminder would be due at creation');
    t.same(days(after(7 * DAY + 1)), [7], '7 days and 1 ms: the 7-day one');
    t.same(days(after(6 * DAY + 23 * HOUR)), [], '6 days 23 hours: none');
    t.same(days(after(30 * DAY)), [7], 'exactly 30 days: the 7-day one only');
    t.same(days(after(30 * DAY + 1)), [30, 7]);
    t.same(days(after(366 * DAY)), [30, 7]);
    t.same(days(after(-DAY)), [], 'expiry before creation');
    // The expiry changed 20 days after creation, to 25 days from then: the 30-day moment has passed.
    t.same(days(after(45 * DAY), after(20 * DAY)), [7]);
    t.same(days(after(90 * DAY), after(95 * DAY)), [], 'expired already');
    t.same(days(after(90 * DAY), after(60 * DAY)), [7], 'due exactly now: left out');
  });

  t.test('reminders: a changed expiry gives different keys', async (t) => {
    const before = schedule(after(90 * DAY)).map((r) => r.key);
    const extended = schedule(after(120 * DAY), { now: after(10 * DAY) }).map((r) => r.key);
    const shortened = schedule(after(90 * DAY - 1), { now: after(10 * DAY) }).map((r) => r.key);
    t.equal(new Set([...before, ...extended, ...shortened]).size, 6);
    t.same(extended, ['expiring:30:2027-03-22T10:00:00.000Z', 'expiring:7:2027-03-22T10:00:00.000Z']);
  });

  t.test('reminders: offsets shortened to seconds', async (t) => {
    const offsetsMs = [30 * SECOND, 7 * SECOND] as const;
    t.same(schedule(after(60 * SECOND), { offsetsMs }), [
      { daysBefore: 30, dueAt: after(30 * SECOND), key: reminderKey(30, after(60 * SECOND)) },
      { daysBefore: 7, dueAt: after(53 * SECOND), key: reminderKey(7, after(60 * SECOND)) },
    ]);
    t.same(schedule(after(7 * SECOND), { offsetsMs }), []);
    t.same(schedule(after(10 * SECOND), { offsetsMs }).map((r) => r.daysBefore), [7]);
    t.throws(() => schedule(after(DAY), { offsetsMs: [0, 7] }), RangeError);
    t.throws(() => schedule(after(DAY), { offsetsMs: [30] as unknown as [number, number] }), RangeError);
    t.throws(() => schedule(after(DAY), { offsetsMs: [Number.NaN, 7] }), RangeError);
  });

  t.test('reminders: every one due after creation and now, before expiry, and none missing', async () => {
    const offset = fc.integer({ min: -400 * DAY, max: 400 * DAY });
    fc.assert(
      fc.property(offset, fc.integer({ min: 0, max: 400 * DAY }), (toExpiry, nowOffset) => {
        const expiresAt = after(toExpiry);
        const now = after(nowOffset);
        const reminders = schedule(expiresAt, { now });
        const notBefore = Math.max(created.getTime(), now.getTime());
        const expected = REMINDER_DAYS.filter((d, i) => expiresAt.getTime() - REMINDER_OFFSETS_MS[i]! > notBefore);
        return (
          reminders.map((r) => r.daysBefore).join() === expected.join() &&
          reminders.every(
            (r) =>
              r.dueAt.getTime() > notBefore &&
              r.dueAt.getTime() < expiresAt.getTime() &&
              r.dueAt.getTime() === expiresAt.getTime() - r.daysBefore * DAY &&
              r.key === `expiring:${r.daysBefore}:${expiresAt.toISOString()}`,
          ) &&
          reminders.every((r, i) => i === 0 || reminders[i - 1]!.dueAt.getTime() < r.dueAt.getTime())
        );
      }),
      { numRuns: runs(1000) },
    );
  });
});

t.test('token-decisions', async (t) => {
  /**
   * A bearer token's scheme (src/api/auth.ts `tokenAuth`): a record accepted once is accepted again
   * with the same principal, every use noted; refused from the moment it expires; a record looked up
   * anew (a revocation clears the store's cache) is decided anew.
   */
  const NOW = Date.parse('2026-11-22T10:00:00.000Z');
  let now = NOW;
  const record = (extra: Partial<TokenRecord> = {}): TokenRecord => ({
    id: 'tok-1',
    generation: 'export_v2',
    originatorId: null,
    userId: 'alice',
    name: 'laptop',
    expiresAt: new Date(NOW + 60_000),
    revokedAt: null,
    ownerDeactivated: false,
    ...extra,
  });
  let current: TokenRecord | null = record();
  const used: string[] = [];
  const finder = {
    cached: () => current,
    find: async () => current,
    markUsed: (id: string) => void used.push(id),
  };
  const auth = tokenAuth(finder, { label: 'export v2', accepts: 'export_v2' }, () => now);
  const first = auth('Bearer hrs_anything');
  t.same(first, { kind: 'user', id: 'alice', tokenId: 'tok-1', generation: 'export_v2' }, 'accepted: its owner');
  t.equal(auth('Bearer hrs_anything'), first, 'accepted again: the same principal');
  t.same(used, ['tok-1', 'tok-1'], 'each use noted');
  now = NOW + 59_999;
  t.equal(auth('Bearer hrs_anything'), first, 'until the last millisecond before its expiry');
  now = NOW + 60_000;
  t.throws(() => auth('Bearer hrs_anything'), { status: 401, message: TOKEN_MESSAGES.expired }, 'refused at its expiry, though accepted before');
  now = NOW;
  current = record({ revokedAt: new Date(NOW - 1) });
  t.throws(() => auth('Bearer hrs_anything'), { status: 401, message: TOKEN_MESSAGES.revoked }, 'a record looked up anew is decided anew');
  current = record({ expiresAt: null, userId: null, originatorId: 'mon-1', generation: 'export_v2' });
  const other = auth('Bearer hrs_anything');
  t.match(other, { kind: 'originator', id: 'mon-1' }, 'another record, another principal');
  now = NOW + 10 * 365 * 24 * 3600_000;
  t.equal(auth('Bearer hrs_anything'), other, 'no expiry: accepted whenever asked');
  current = null;
  t.throws(() => auth('Bearer hrs_anything'), { status: 401, message: TOKEN_MESSAGES.unknown }, 'no record: unknown');
});

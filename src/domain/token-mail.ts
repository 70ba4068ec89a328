/**
 * The e-mails the owners of API tokens receive: a token was created, was revoked or is about to
 * expire; a single-use sign-in link; a single-use link to see a token an administrator issued. Each
 * is a subject, a plain-text body and a small self-contained HTML document saying the same. None
 * ever holds a token's value: a token is named by its name and hint (`"laptop" (…Xy7Q)`).
 */
import { formatInstant, knownTimeZone, message, oneLine, subjectName, type Block, type Inline, type MailMessage, type MailRecipient } from './mail-layout.js';

/** The layout's names its callers use, from here as before. */
export { escapeHtml, formatInstant, type MailMessage, type MailRecipient } from './mail-layout.js';

/** The e-mails about a token: created, revoked, expiring (30 or 7 days before its expiry). */
export const TOKEN_MAIL_KINDS = ['created', 'revoked', 'expiring'] as const;
/** One of the e-mails about a token. */
export type TokenMailKind = (typeof TOKEN_MAIL_KINDS)[number];

/** Every e-mail this module writes: the token ones, the sign-in link and the link to see an issued token. */
export const MAIL_KINDS = [...TOKEN_MAIL_KINDS, 'sign_in', 'reveal'] as const;
/** One of the e-mails this module writes. */
export type MailKind = (typeof MAIL_KINDS)[number];

/** A token as its e-mails describe it: never its value. */
export interface TokenMailToken {
  name: string;
  /** The value's last four characters (`tokenHint` in token-values.ts). */
  hint: string;
  expiresAt: Date | null;
  createdAt: Date;
}

/** What `renderTokenMail` needs. */
export interface TokenMailInput {
  kind: TokenMailKind;
  recipient: MailRecipient;
  token: TokenMailToken;
  /** For `revoked`: who revoked it; the owner unless said. */
  revokedBy?: 'owner' | 'admin';
  /** For `expiring`: how many days are left (required). */
  daysLeft?: number;
  /** The portal's API tokens page. */
  portalUrl: string;
  /** The IANA time zone times are given in; UTC unless said, and when the zone is not known. */
  timeZone?: string;
}

/** What `renderSignInMail` needs: the single-use link and how many minutes it stays valid. */
export interface SignInMailInput {
  recipient: MailRecipient;
  link: string;
  validMinutes: number;
}

/** What `renderRevealMail` needs: the single-use link to see an issued token's value, valid until `linkExpiresAt`. */
export interface RevealMailInput {
  recipient: MailRecipient;
  link: string;
  tokenName: string;
  linkExpiresAt: Date;
  timeZone?: string;
}


/** `"laptop" (…Xy7Q)`: how every e-mail names a token. */
function tokenLabel(token: TokenMailToken): Inline[] {
  return [{ strong: `"${oneLine(token.name)}"` }, ` (…${oneLine(token.hint)})`];
}

/** `in 7 days`, `in 1 day`, `today`. */
function inDays(days: number): string {
  if (days <= 0) return 'today';
  return days === 1 ? 'in 1 day' : `in ${days} days`;
}

function tokenFacts(token: TokenMailToken, timeZone: string, expiryLabel: string, noExpiry: string): Block {
  return {
    facts: [
      ['Token', tokenLabel(token)],
      ['Created', [formatInstant(token.createdAt, timeZone)]],
      [expiryLabel, [token.expiresAt ? formatInstant(token.expiresAt, timeZone) : noExpiry]],
    ],
  };
}

/**
 * The e-mail telling a token's owner it was created, revoked or is about to expire: it names the
 * token, states its expiry (date, time and zone) and says what to do. Throws for an `expiring`
 * e-mail without `daysLeft` or about a token without expiry: the reminder was scheduled wrongly.
 */
export function renderTokenMail(input: TokenMailInput): MailMessage {
  const { recipient, token } = input;
  const timeZone = knownTimeZone(input.timeZone);
  const page: Inline = { href: input.portalUrl, label: 'the API tokens page' };
  const quoted = `"${subjectName(token.name)}"`;
  // Each kind is told alike by shape (subject, what happened, the facts, what to do), in its own words.
  switch (input.kind) {
    case 'created':
      return message(`Your HRS API token ${quoted} was created`, recipient, [
        { paragraph: ['A new API token was created on your HRS account:'] },
        tokenFacts(token, timeZone, 'Expires', 'Never: this token does not expire'),
        { paragraph: ['If you created it, there is nothing to do. Its value was shown once, when it was created, and cannot be shown again.'] },
        {
          paragraph: [
            'If this was not you, revoke it at once on ',
            page,
            ' and tell the platform contact: until it is revoked, whoever holds it can use the API as you.',
          ],
        },
      ]);
    case 'revoked': {
      const byAdmin = input.revokedBy === 'admin';
      return message(`Your HRS API token ${quoted} was revoked`, recipient, [
        { paragraph: ['Your API token ', ...tokenLabel(token), byAdmin ? ' was revoked by a platform administrator.' : ' was revoked by you.'] },
        tokenFacts(token, timeZone, 'Was to expire', 'Never: this token did not expire'),
        { paragraph: ['Requests made with it are now refused with 401 Unauthorized, wherever it is still in use.'] },
        { paragraph: ['To keep using the API, create a new token on ', page, ' and put its value in place of the old one.'] },
        {
          paragraph: [
            byAdmin ? 'If you do not know why it was revoked, ask the platform contact.' : 'If you did not revoke it, tell the platform contact at once.',
          ],
        },
      ]);
    }
    case 'expiring': {
      if (input.daysLeft === undefined) throw new TypeError('an expiring e-mail needs daysLeft');
      if (!token.expiresAt) throw new TypeError('an expiring e-mail needs a token with an expiry');
      const when = inDays(input.daysLeft);
      return message(`Your HRS API token ${quoted} expires ${when}`, recipient, [
        {
          paragraph: ['Your API token ', ...tokenLabel(token), ` expires ${when}, on ${formatInstant(token.expiresAt, timeZone)}.`],
        },
        tokenFacts(token, timeZone, 'Expires', 'Never: this token does not expire'),
        { paragraph: ['From then on, requests made with it are refused with 401 Unauthorized.'] },
        {
          paragraph: [
            'Once expired, a token cannot be renewed and its value cannot be recovered. To keep using the API without a break, create a new token on ',
            page,
            ', put it in place of this one wherever it is used, then revoke this one.',
          ],
        },
        { paragraph: ['While this token is still active, you can instead extend its expiry on the same page.'] },
      ]);
    }
    default: {
      const kind: never = input.kind;
      throw new TypeError(`no token e-mail of kind ${String(kind)}`);
    }
  }
}

/** The e-mail holding a single-use sign-in link to the portal, valid for `validMinutes` minutes. */
export function renderSignInMail(input: SignInMailInput): MailMessage {
  const minutes = input.validMinutes === 1 ? '1 minute' : `${input.validMinutes} minutes`;
  return message('Your HRS sign-in link', input.recipient, [
    { paragraph: ['Use this link to sign in to the HRS portal:'] },
    { paragraph: [{ href: input.link, label: input.link }] },
    { paragraph: [`It works once, and for ${minutes} from when it was sent. Do not forward it: whoever holds it can sign in as you.`] },
    { paragraph: ['If you did not ask to sign in, ignore this e-mail: nobody can sign in with your address without this link.'] },
  ]);
}

/**
 * The e-mail holding a single-use link to see the value of a token an administrator issued for the
 * recipient, valid until `linkExpiresAt`: the value itself is never sent by e-mail.
 */
export function renderRevealMail(input: RevealMailInput): MailMessage {
  const timeZone = knownTimeZone(input.timeZone);
  return message(`Your HRS API token "${subjectName(input.tokenName)}" is ready`, input.recipient, [
    {
      paragraph: [
        'A platform administrator created the API token ',
        { strong: `"${oneLine(input.tokenName)}"` },
        ' for you. Its value is not sent by e-mail: open this link to see it.',
      ],
    },
    { paragraph: [{ href: input.link, label: input.link }] },
    {
      paragraph: [
        `The link works once, until ${formatInstant(input.linkExpiresAt, timeZone)}. ` +
          'The value is shown once only: copy it straight to where it will be used, or into a password manager or secret store.',
      ],
    },
    { paragraph: ['If the link has expired or was already used, ask the platform contact for a new one. If you did not expect this token, tell the platform contact.'] },
  ]);
}

/** The kinds of token a credential reminder speaks of, as the e-mails name them. */
const CREDENTIAL_KINDS: Record<string, string> = {
  import_v2: 'import token (import v2)',
  import_v1: 'import token (import v1 and v1.1)',
  export_v1: 'legacy export token (export v1 and v1.1)',
};

/** What `renderCredentialReminder` needs. */
export interface CredentialReminderInput {
  recipient: MailRecipient;
  /** Why the recipient is told: a manager of the token's originator, or a platform admin. */
  as: 'manager' | 'admin';
  token: {
    id: string;
    generation: string;
    name: string;
    /** The value's last four characters; null for a token loaded from a registry file. */
    hint: string | null;
    createdAt: Date;
    expiresAt: Date;
    originator: { id: string; name: string } | null;
  };
  daysLeft: number;
  /** The portal's address (`…/portal/`). */
  portalUrl: string;
  timeZone?: string;
}

/**
 * The reminder that an import token or a legacy export token expires in 30 or 7 days, to its
 * originator's managers or to the admins: it names the token (name, hint when it has one, id, kind,
 * originator; never its value), states its expiry in the mail time zone, says what stops when it
 * expires and how to renew it: on the portal for a token made there, in the registry file (a later
 * `expires_at`, loaded again) for one loaded from a file.
 */
export function renderCredentialReminder(input: CredentialReminderInput): MailMessage {
  const { recipient, token } = input;
  const timeZone = knownTimeZone(input.timeZone);
  const kind = CREDENTIAL_KINDS[token.generation] ?? `${token.generation} token`;
  const isImport = token.generation === 'import_v1' || token.generation === 'import_v2';
  const fromFile = token.hint === null;
  const origin = token.originator;
  const when = inDays(input.daysLeft);
  const portal: Inline = { href: input.portalUrl, label: input.portalUrl };
  const named: Inline[] = [{ strong: `"${oneLine(token.name) || `token ${token.id}`}"` }, token.hint ? ` (…${oneLine(token.hint)})` : ''];
  const ofOriginator = origin ? ` of ${oneLine(origin.name)}` : '';
  const subject = `HRS ${kind.split(' (')[0]} "${subjectName(token.name || `token ${token.id}`)}"${ofOriginator ? ` of ${subjectName(origin!.name)}` : ''} expires ${when}`;
  const facts: Block = {
    facts: [
      ['Token', [...named, `, id ${token.id}`]],
      ['Kind', [kind]],
      ...(origin ? ([['Originator', [`${oneLine(origin.name)} (${oneLine(origin.id)})`]]] as [string, Inline[]][]) : []),
      ['Made', [fromFile ? 'loaded from a registry file' : 'on the portal', `, ${formatInstant(token.createdAt, timeZone)}`]],
      ['Expires', [formatInstant(token.expiresAt, timeZone)]],
    ],
  };
  const consequence = isImport
    ? `From then on, signals sent with it are refused with 401 Unauthorized, and the stations ${origin ? `${oneLine(origin.name)} reports on` : 'it reports on'} fall to unknown unless another token of the originator is in use.`
    : 'From then on, requests made with it are refused with 401 Unauthorized.';
  const todo: Block[] = [];
  if (fromFile && input.as === 'admin') {
    todo.push({
      paragraph: [
        'It was loaded from a registry file. To renew it, give it a later ',
        { strong: 'expires_at' },
        ' in the registry file and load the file again (',
        { strong: 'hrs load' },
        '): the same value keeps working, nothing changes for the systems that use it.',
      ],
    });
    if (isImport) todo.push({ paragraph: ['Or replace it: create a new import token for the originator on the portal (', portal, ', the originator\'s page, Import tokens), hand it over, and revoke this one once it is no longer used.'] });
  } else if (fromFile) {
    todo.push({
      paragraph: [
        'It was loaded from a registry file, which the platform administrators keep: ask them to extend it. Or replace it yourself: create a new import token on the portal (',
        portal,
        ', the originator\'s page, Import tokens), put it in place of this one in every system that sends signals with it, then revoke this one.',
      ],
    });
  } else {
    todo.push({
      paragraph: [
        'An expired token cannot be renewed. To keep signals flowing without a break, create a new import token on the portal (',
        portal,
        ', the originator\'s page, Import tokens), put it in place of this one in every system that sends signals with it, then revoke this one.',
      ],
    });
    if (input.as === 'admin') todo.push({ paragraph: ['The originator has no manager on the portal, so the platform administrators are told. Give it one (the roles of an account) to have its managers told from now on.'] });
  }
  const why =
    input.as === 'manager'
      ? `You receive this e-mail as a manager of the originator ${origin ? `${oneLine(origin.name)} (${oneLine(origin.id)})` : ''} on the HRS portal.`
      : 'You receive this e-mail as an administrator of the HRS signal platform.';
  return message(subject, recipient, [
    { paragraph: [`The ${kind.split(' (')[0]} `, ...named, `${ofOriginator} expires ${when}, on ${formatInstant(token.expiresAt, timeZone)}.`] },
    facts,
    { paragraph: [consequence] },
    ...todo,
    { paragraph: [why] },
  ]);
}

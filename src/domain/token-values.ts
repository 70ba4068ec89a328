import { randomBytes } from 'node:crypto';
import type { Generation } from './vocabulary.js';

/**
 * Token values in the manner of GitHub's: a prefix naming the generation, 43 base62 characters
 * holding 32 random bytes (256 bits), and a 6-character base62 CRC32 checksum of prefix and body, so
 * that a secret scanner can tell a real-looking value from a typo or a random string without asking
 * the platform. Also the rules for personal tokens' expiry and how many a user may hold at once.
 */

/** The prefix of each generation's values; `hrs_pat_` is a personal access token (export v2). */
export const TOKEN_PREFIXES: Record<Generation, string> = {
  export_v2: 'hrs_pat_',
  export_v1: 'hrs_exp1_',
  import_v2: 'hrs_imp2_',
  import_v1: 'hrs_imp1_',
};

/** How many random bytes a value holds. */
export const TOKEN_RANDOM_BYTES = 32;
/** The length of the body: 43 base62 characters always hold 256 bits (62^43 > 2^256). */
export const TOKEN_BODY_LENGTH = 43;
/** The length of the checksum: 6 base62 characters always hold a CRC32 (62^6 > 2^32). */
export const TOKEN_CHECKSUM_LENGTH = 6;

/** The base62 alphabet, digits first, then capitals, then small letters. */
export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Where random bytes come from: `randomBytes` from node:crypto unless a test hands in its own. */
export type RandomSource = (size: number) => Uint8Array;

const CRC32_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC32 (IEEE 802.3, as zip and PNG use it) of bytes, or of a string's UTF-8 bytes; unsigned. */
export function crc32(input: string | Uint8Array): number {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC32_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** A non-negative integer in base62, left-padded with `0` to exactly `width` characters. */
function encodeBase62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62_ALPHABET[Number(rest % 62n)]! + out;
    rest /= 62n;
  }
  if (rest !== 0n) throw new RangeError(`${value} does not fit in ${width} base62 characters`);
  return out;
}

/** The integer base62 characters stand for; the caller has checked the alphabet. */
function decodeBase62(text: string): bigint {
  let value = 0n;
  for (const char of text) value = value * 62n + BigInt(BASE62_ALPHABET.indexOf(char));
  return value;
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

const LARGEST_BODY = (1n << BigInt(TOKEN_RANDOM_BYTES * 8)) - 1n;

/** The checksum of a prefix and body: their CRC32 in 6 base62 characters. */
export function tokenChecksum(prefixAndBody: string): string {
  return encodeBase62(BigInt(crc32(prefixAndBody)), TOKEN_CHECKSUM_LENGTH);
}

/**
 * A new token value for a generation: prefix, 43 base62 characters of 32 random bytes, checksum.
 * Only its hash is ever stored; the value is shown once, to whoever the token is for.
 */
export function newTokenValue(generation: Generation, random: RandomSource = (size) => randomBytes(size)): string {
  const bytes = random(TOKEN_RANDOM_BYTES);
  if (bytes.length !== TOKEN_RANDOM_BYTES) {
    throw new RangeError(`the random source gave ${bytes.length} bytes, not ${TOKEN_RANDOM_BYTES}`);
  }
  const prefixAndBody = TOKEN_PREFIXES[generation] + encodeBase62(bytesToBigInt(bytes), TOKEN_BODY_LENGTH);
  return prefixAndBody + tokenChecksum(prefixAndBody);
}

const BODY_AND_CHECKSUM = new RegExp(`^[0-9A-Za-z]{${TOKEN_BODY_LENGTH + TOKEN_CHECKSUM_LENGTH}}$`);
const PREFIXES = Object.entries(TOKEN_PREFIXES) as [Generation, string][];

/**
 * The generation of a value that is well formed: a known prefix, a body and checksum of the right
 * length and alphabet, a body that 32 bytes can make, and the right checksum. Undefined for anything
 * else. It says nothing of whether such a token exists: only the store knows that.
 */
export function isWellFormedToken(value: string): Generation | undefined {
  if (typeof value !== 'string') return undefined;
  const found = PREFIXES.find(([, prefix]) => value.startsWith(prefix));
  if (!found) return undefined;
  const [generation, prefix] = found;
  const rest = value.slice(prefix.length);
  if (!BODY_AND_CHECKSUM.test(rest)) return undefined;
  const body = rest.slice(0, TOKEN_BODY_LENGTH);
  if (decodeBase62(body) > LARGEST_BODY) return undefined;
  return rest.slice(TOKEN_BODY_LENGTH) === tokenChecksum(prefix + body) ? generation : undefined;
}

/**
 * The hint shown beside a token's name in lists and e-mails (`…Xy7Q`): the value's last four
 * characters, which for a value `newTokenValue` made are checksum characters, not random ones.
 */
export function tokenHint(value: string): string {
  return value.slice(-4);
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How far ahead a personal token's expiry may be set, in days of 24 hours from the moment it is
 * set; and the expiry a new token gets when none is chosen.
 */
export const PERSONAL_TOKEN_EXPIRY = { minDays: 1, maxDays: 366, defaultDays: 90 } as const;

/** The earliest and latest expiry a personal token may be given at `now`, both allowed. */
export function expiryBounds(now: Date): { earliest: Date; latest: Date } {
  return {
    earliest: new Date(now.getTime() + PERSONAL_TOKEN_EXPIRY.minDays * DAY_MS),
    latest: new Date(now.getTime() + PERSONAL_TOKEN_EXPIRY.maxDays * DAY_MS),
  };
}

/**
 * What is wrong with a personal token's requested expiry, as the API answers it; null when it is
 * allowed (at least 1 day and at most 366 days from `now`, both ends included).
 */
export function checkExpiry(expiresAt: Date, now: Date): string | null {
  if (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime())) return 'expires_at: must be a valid date and time';
  const { earliest, latest } = expiryBounds(now);
  const days = (count: number) => (count === 1 ? '1 day' : `${count} days`);
  if (expiresAt.getTime() < earliest.getTime()) {
    return (
      `expires_at: must be at least ${days(PERSONAL_TOKEN_EXPIRY.minDays)} from now ` +
      `(got ${expiresAt.toISOString()}; the earliest allowed is ${earliest.toISOString()})`
    );
  }
  if (expiresAt.getTime() > latest.getTime()) {
    return (
      `expires_at: must be at most ${days(PERSONAL_TOKEN_EXPIRY.maxDays)} from now ` +
      `(got ${expiresAt.toISOString()}; the latest allowed is ${latest.toISOString()})`
    );
  }
  return null;
}

/** The expiry a personal token created at `now` gets when none is chosen: 90 days on. */
export function defaultExpiry(now: Date): Date {
  return new Date(now.getTime() + PERSONAL_TOKEN_EXPIRY.defaultDays * DAY_MS);
}

/** How many personal tokens a user may hold at once (active: neither revoked nor expired). */
export const MAX_ACTIVE_PERSONAL_TOKENS = 5;

/** Whether a user holding `active` active personal tokens may create another. */
export function mayCreatePersonalToken(active: number): boolean {
  return active < MAX_ACTIVE_PERSONAL_TOKENS;
}

/** Why a user holding `active` active personal tokens (the most allowed, or more) may not create another. */
export function tooManyTokensMessage(active: number): string {
  const max = MAX_ACTIVE_PERSONAL_TOKENS;
  if (active <= max) {
    return `You already have ${max} active personal tokens, the most allowed: revoke one or let one expire before creating another.`;
  }
  const over = active - max + 1;
  return (
    `You already have ${active} active personal tokens and at most ${max} are allowed: ` +
    `revoke ${over} or let them expire before creating another.`
  );
}

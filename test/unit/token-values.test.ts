/**
 * Token values: prefix, body and checksum, well formed whatever the random bytes; any one character
 * changed is caught offline; the hint; personal tokens' expiry bounds at their edges and the limit
 * on how many a user holds.
 */
import t from 'tap';
import fc from 'fast-check';
import { crc32 as zlibCrc32 } from 'node:zlib';
import {
  BASE62_ALPHABET,
  TOKEN_BODY_LENGTH,
  TOKEN_CHECKSUM_LENGTH,
  TOKEN_PREFIXES,
  checkExpiry,
  crc32,
  defaultExpiry,
  expiryBounds,
  isWellFormedToken,
  mayCreatePersonalToken,
  newTokenValue,
  tokenChecksum,
  tokenHint,
  tooManyTokensMessage,
} from '../../src/domain/token-values.js';
import { GENERATIONS, type Generation } from '../../src/domain/vocabulary.js';
import { runs } from '../helpers/scale.js';

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

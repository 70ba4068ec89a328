import { z } from 'zod';

/**
 * The one rule for text the platform stores, whatever brings it (import v1, v1.1 and v2, the portal,
 * the admin API, a registry file):
 * - no U+0000 (PostgreSQL's text and jsonb cannot hold it) and no unpaired surrogate (not Unicode text:
 *   UTF-8 cannot encode it, and the database client would store it as U+FFFD without a word);
 * - a name or an identifier is not blank: at least one character that is neither white space nor a
 *   control character.
 * Each family words the refusal in its own error format, always naming the field, and refuses before
 * anything is written. The query string and path segments follow the same rule (src/http/request.ts,
 * src/http/router.ts).
 */

/** What breaks the rule in a string: a NUL, or an unpaired surrogate (its code unit). */
export type TextFault = { kind: 'nul' } | { kind: 'surrogate'; code: number };

const UNPAIRED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A NUL or any surrogate: a quick scan before the exact look (most text has neither). */
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
/** White space (as `\s` reads it) and control characters (C0, DEL, C1). */
const BLANK = /^[\s\u0000-\u001F\u007F-\u009F]*$/;

export function textFault(value: string): TextFault | undefined {
  if (value.includes('\u0000')) return { kind: 'nul' };
  const lone = UNPAIRED.exec(value);
  return lone ? { kind: 'surrogate', code: lone[0].charCodeAt(0) } : undefined;
}

/** U+D800 as messages write a code unit. */
export const codePoint = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;

/** Whether a name or identifier is made only of white space and control characters (or is empty). */
export const isBlank = (value: string): boolean => BLANK.test(value);

/** The rule broken by `value`, in the words of the portal, the admin API and registry files; undefined when none. */
export function textProblem(value: string): string | undefined {
  const fault = textFault(value);
  if (!fault) return undefined;
  return fault.kind === 'nul'
    ? 'must not contain the NUL character (U+0000)'
    : `must not contain an unpaired surrogate (${codePoint(fault.code)})`;
}

export const BLANK_NAME = 'must not be blank (only spaces or control characters)';

/** {@link textProblem}, and for a name or identifier also {@link BLANK_NAME}. */
export function nameProblem(value: string): string | undefined {
  return textProblem(value) ?? (isBlank(value) ? BLANK_NAME : undefined);
}

/** A place in a JSON value: keys and indexes from the root. */
export type JsonPath = (string | number)[];

/** At most this many faults are reported for one value (the rest would only repeat the same message). */
const MAX_FAULTS = 20;

/**
 * Every string and every object key of a JSON value that breaks the text rule, with its path (a key's
 * fault is reported at the key's own path), in document order, at most {@link MAX_FAULTS}.
 */
export function textFaults(value: unknown): { path: JsonPath; problem: string }[] {
  const found: { path: JsonPath; problem: string }[] = [];
  // One path, pushed and popped on the way; copied only for a fault.
  const path: JsonPath = [];
  const walk = (node: unknown): void => {
    if (found.length >= MAX_FAULTS) return;
    if (typeof node === 'string') {
      const problem = SUSPECT.test(node) ? textProblem(node) : undefined;
      if (problem) found.push({ path: [...path], problem });
    } else if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index++) {
        path.push(index);
        walk(node[index]);
        path.pop();
      }
    } else if (node !== null && typeof node === 'object') {
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue;
        path.push(key);
        const problem = SUSPECT.test(key) ? textProblem(key) : undefined;
        if (problem) {
          if (found.length < MAX_FAULTS) found.push({ path: [...path], problem: `key ${problem}` });
        } else walk((node as Record<string, unknown>)[key]);
        path.pop();
      }
    }
  };
  walk(value);
  return found;
}

/**
 * JSON Schema patterns of the rule for the OpenAPI documents (metadata: the rule above is what
 * checks). They are read with the `u` flag, as ECMA-262 patterns are, where a surrogate pair is one
 * character: any text, and a name (at least one character that is not white space or a control).
 */
export const TEXT_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*$';
export const NAME_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*[^\\s\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF][^\\u0000\\uD800-\\uDFFF]*$';

/**
 * A zod string of at most `max` characters, the limit checked before anything else: a longer value is
 * refused with that one message, and nothing after the limit (a pattern, a format, a parser, a
 * refinement, the checks of the object around it) ever reads it. zod 4 otherwise goes on with every
 * check and refinement after a failed `max` (it only stops at an aborting issue): an opening-hours
 * check ran for seconds on a value its 1,000-character limit had already refused. Every text field of
 * every input starts with it (test/platform/http.test.ts walks the routes' schemas to hold it so).
 * `params` are the string's own (its refusal of a value that is not a string).
 */
export function boundedString(max: number, message = `must be at most ${max} characters`, params?: Parameters<typeof z.string>[0]): z.ZodString {
  return z.string(params).max(max, { error: message, abort: true });
}

/** The longest ISO 8601 date-time an input takes (with an offset and nanoseconds it has 35 characters). */
export const DATE_TIME_MAX_LENGTH = 64;

/** An ISO 8601 date-time with a UTC offset, refused in `message`'s words, its length bounded first. */
export function boundedDateTime(message: string): z.ZodString {
  return boundedString(DATE_TIME_MAX_LENGTH, message).check(z.iso.datetime({ offset: true, error: message }));
}

/** A zod string checked by the text rule, with the portal's words, documented by its pattern. */
export function storedText<T extends z.ZodString>(schema: T): T {
  return schema
    .superRefine((value, ctx) => {
      const problem = textProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
    })
    .meta({ pattern: TEXT_PATTERN }) as T;
}

/**
 * A zod string checked as a name or identifier: the text rule and not blank. The empty string is left
 * to the schema's own minimum (one message for it, or allowed where an empty name means none).
 */
export function storedName<T extends z.ZodString>(schema: T): T {
  return schema
    .superRefine((value, ctx) => {
      const problem = value === '' ? undefined : nameProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
    })
    .meta({ pattern: NAME_PATTERN }) as T;
}

/**
 * `value` without the strings its schema's length limits refused (the paths of `too_big` issues of
 * strings), copied only along those paths: for rules that read a request as it came, beside its schema
 * (import v2's and v1's), so that they never read, echo or parse a value its limit refused.
 */
export function withoutRefused(value: unknown, issues: readonly z.core.$ZodIssue[]): unknown {
  let result = value;
  for (const issue of issues) {
    if (issue.code === 'too_big' && issue.origin === 'string' && issue.path.length > 0) result = omitAt(result, issue.path);
  }
  return result;
}

function omitAt(value: unknown, path: readonly PropertyKey[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...(value as unknown[])] : { ...value }) as Record<PropertyKey, unknown>;
  if (rest.length === 0) {
    if (Array.isArray(copy)) copy[head as number] = undefined;
    else delete copy[head as PropertyKey];
  } else copy[head as PropertyKey] = omitAt(copy[head as PropertyKey], rest);
  return copy;
}

/**
 * Where a byte sequence stops being UTF-8 (RFC 3629, as Unicode's table of well-formed sequences
 * reads it): the byte offset of the first sequence that is not, and what is wrong with it. Undefined
 * for UTF-8. Request bodies and registry files are refused with it rather than decoded with
 * replacement characters: an `FF` or an encoded surrogate (`ED A0 80`) would otherwise be stored as
 * U+FFFD without a word, while the same text escaped in JSON (`"\ud800"`) is refused by the text rule.
 * Linear: each byte looked at once.
 */
export interface Utf8Fault {
  /** The offset of the sequence's first byte. */
  offset: number;
  /** The bytes at fault, in hex (`ED A0 80`): the sequence up to and including the byte that breaks it. */
  bytes: string;
  /** What is wrong, as a phrase: `an encoded surrogate`. */
  reason: string;
}

export function utf8Fault(bytes: Uint8Array): Utf8Fault | undefined {
  const hex = (from: number, to: number) =>
    Array.from(bytes.subarray(from, Math.min(to, bytes.length)), (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const fault = (length: number, reason: string): Utf8Fault => ({ offset: i, bytes: hex(i, i + length), reason });
    if (lead < 0xc2 || lead > 0xf4) return fault(1, lead < 0xc0 ? 'a continuation byte without a lead byte' : 'a byte that never occurs in UTF-8');
    const length = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    // The second byte's range depends on the lead (no overlong form, no surrogate, nothing past U+10FFFF).
    const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f] : lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k];
      if (next === undefined) return fault(k, 'an incomplete sequence at the end');
      const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf];
      if (next >= min && next <= max) continue;
      if (next < 0x80 || next > 0xbf) return fault(k + 1, 'an incomplete sequence');
      const reason = lead === 0xed ? 'an encoded surrogate (U+D800 to U+DFFF)' : lead === 0xf4 ? 'a code point above U+10FFFF' : 'an overlong encoding';
      return fault(length, reason);
    }
    i += length;
  }
  return undefined;
}

/** `utf8Fault` in words: `an encoded surrogate (U+D800 to U+DFFF) at byte offset 12 (ED A0 80)`. */
export const utf8FaultText = (fault: Utf8Fault) => `${fault.reason} at byte offset ${fault.offset} (${fault.bytes})`;

/**
 * The one rule for an e-mail address, wherever one is accepted (sign-in, accounts and token owners in
 * the admin API, registry files' users and operators, a station's contact, ADMIN_EMAILS): at most 254
 * characters (RFC 5321's path limit), checked first; a local part of letters, digits and
 * `_ ' + - .` (no leading, trailing or doubled dot); a domain of dot-separated labels of 1 to 63
 * letters, digits and hyphens, none starting or ending with a hyphen (RFC 1035's host names), ending in
 * a top-level label of at least two letters. Linear: the labels are separated by a character they
 * cannot hold.
 */
export const EMAIL_PATTERN = /^(?!\.)(?!.*\.\.)[A-Za-z0-9_'+\-.]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
export const EMAIL_MAX_LENGTH = 254;

/** A zod string that is an e-mail address by {@link EMAIL_PATTERN}, its length bounded first, refused in `message`'s words. */
export function emailAddress(message = 'must be an e-mail address'): z.ZodString {
  return boundedString(EMAIL_MAX_LENGTH, `${message} (at most ${EMAIL_MAX_LENGTH} characters)`).check(z.email({ pattern: EMAIL_PATTERN, error: message }));
}

/**
 * A value from a request body as `String()` writes it (`[object Object]`, `1,2`), without calling
 * anything the body defined: `{"toString": null}` is valid JSON on which `String()` throws.
 */
export function shownValue(value: unknown): string {
  if (Array.isArray(value)) return value.map((item) => (item === null || item === undefined ? '' : shownValue(item))).join(',');
  if (value !== null && typeof value === 'object') return '[object Object]';
  return String(value);
}

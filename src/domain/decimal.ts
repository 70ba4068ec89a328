/**
 * Decimal fields counted as a decimal column with max_digits and decimal_places counts them: every
 * digit of the written value counts (trailing zeros after the point included, leading zeros not).
 */

export interface DecimalRule {
  maxDigits: number;
  decimalPlaces: number;
}

/** Digits with an optional point and fraction; a leading `-` (reported as a range problem), never `+`. */
const DECIMAL = /^-?(\d+)(?:\.(\d+))?$/;

/**
 * The problem of a decimal written as a string, or undefined: the first of total digits, decimal
 * places, whole digits, in that order (exponents, a leading `+` and other spellings are not numbers here).
 */
export function decimalProblem(text: string, rule: DecimalRule): string | undefined {
  const match = DECIMAL.exec(text);
  if (!match) return 'A valid number is required.';
  const fraction = match[2] ?? '';
  const coefficient = `${match[1]}${fraction}`.replace(/^0+/, '') || '0';
  const exponent = fraction.length;
  let total: number;
  let whole: number;
  if (exponent === 0) {
    total = coefficient.length;
    whole = total;
  } else if (coefficient.length > exponent) {
    total = coefficient.length;
    whole = total - exponent;
  } else {
    total = exponent;
    whole = 0;
  }
  if (total > rule.maxDigits) return `Ensure that there are no more than ${rule.maxDigits} digits in total.`;
  if (exponent > rule.decimalPlaces) return `Ensure that there are no more than ${rule.decimalPlaces} decimal places.`;
  if (whole > rule.maxDigits - rule.decimalPlaces) {
    return `Ensure that there are no more than ${rule.maxDigits - rule.decimalPlaces} digits before the decimal point.`;
  }
  return undefined;
}

/** A JSON number as the decimal it was written as (within what a double keeps), or undefined. */
export function numberAsDecimal(value: number): string | undefined {
  if (!Number.isFinite(value)) return undefined;
  const text = String(value);
  return /e/i.test(text) ? undefined : text;
}

/** Fixed-point value in units of 10^-places, exact for the digits allowed here. */
export function toUnits(text: string, places: number): bigint {
  const match = DECIMAL.exec(text)!;
  const sign = text.startsWith('-') ? -1n : 1n;
  const fraction = (match[2] ?? '').padEnd(places, '0').slice(0, places);
  return sign * BigInt(`${match[1]}${fraction}`);
}

/** Canonical text with exactly `places` decimals ("12.5" → "12.500"). */
export function formatUnits(units: bigint, places: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(places + 1, '0');
  const text = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  return negative ? `-${text}` : text;
}

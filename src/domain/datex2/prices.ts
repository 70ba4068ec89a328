/**
 * Prices for DATEX II: the registry takes up to three decimals per kg (`12.345`), DATEX's
 * `AmountOfMoney` two. A price is rounded half up to the cent (`12.345` → `12.35`, `12.344` → `12.34`),
 * on the digits as written, never through a binary float.
 */

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** The decimal string rounded half up to two decimals (`"7"` → `"7.00"`); null when it is not a plain non-negative decimal. */
export function centsHalfUp(value: string): string | null {
  const match = DECIMAL.exec(value);
  if (!match) return null;
  const fraction = (match[2] ?? '').padEnd(3, '0');
  // Thousandths as an integer, then to cents with the third decimal deciding.
  const thousandths = BigInt(match[1]!) * 1000n + BigInt(fraction.slice(0, 3));
  // Only the third decimal decides: half up, whatever follows it.
  const cents = thousandths / 10n + (fraction[2]! >= '5' ? 1n : 0n);
  const whole = cents / 100n;
  const rest = (cents % 100n).toString().padStart(2, '0');
  return `${whole}.${rest}`;
}

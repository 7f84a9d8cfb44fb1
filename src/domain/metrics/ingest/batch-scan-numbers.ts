// JSON numbers read from bytes for the batch scanner (domain/metrics/ingest/batch-scan.ts), to the double JSON.parse
// gives: most in a few multiplications (Clinger's fast path), the rest through Number() of their
// text, which for JSON's number grammar reads exactly as JSON.parse does.
import { ZERO, isDigit } from './batch-scan-strings';

const [MINUS, DOT, PLUS, LOWER_E, UPPER_E] = [45, 46, 43, 101, 69];

// Powers of ten that are exact doubles: m * 10^k and m / 10^k with m < 2^53 are then one correctly
// rounded operation, the value JSON.parse gives (Clinger's fast path).
const POW10 = Float64Array.from({ length: 23 }, (_, k) => 10 ** k);
const MAX_FAST_DIGITS = 15;
const HUGE = 2 ** 31;

/**
 * Reads a JSON number at `p` into out[at]; the index after it, or -1 (not JSON, or not finite).
 * `b` must hold a byte after the number that is not part of it (domain/metrics/ingest/batch-scan.ts pads the body with zeros).
 */
export function scanNumber(b: Uint8Array, p: number, out: Float64Array, at: number): number {
  const start = p;
  const negative = b[p] === MINUS;
  if (negative) p++;
  let c = b[p]!;
  let mantissa = 0;
  let digits = 0; // significant ones: leading zeros do not count
  let scale = 0; // digits after the point
  if (c === ZERO) c = b[++p]!;
  else if (!isDigit(c)) return -1;
  else for (; isDigit(c); c = b[++p]!, digits++) mantissa = mantissa * 10 + (c - ZERO);
  if (c === DOT) {
    if (!isDigit((c = b[++p]!))) return -1;
    for (; isDigit(c); c = b[++p]!, scale++) {
      if (mantissa !== 0 || c !== ZERO) digits++;
      mantissa = mantissa * 10 + (c - ZERO);
    }
  }
  if (c !== LOWER_E && c !== UPPER_E) {
    // no exponent, the usual case: an integer, or a fraction of up to 22 digits
    if (digits <= MAX_FAST_DIGITS && scale <= 22) {
      const value = scale === 0 ? mantissa : mantissa / POW10[scale]!;
      out[at] = negative ? -value : value;
      return p;
    }
    return slowNumber(b, start, p, out, at);
  }
  c = b[++p]!;
  const sign = c === MINUS ? -1 : 1;
  if (c === MINUS || c === PLUS) c = b[++p]!;
  if (!isDigit(c)) return -1;
  let exponent = 0;
  // past 2^30 it only counts as huge (then read the slow way)
  for (; isDigit(c); c = b[++p]!) exponent = exponent < 2 ** 30 ? exponent * 10 + (c - ZERO) : HUGE;
  const k = sign * exponent - scale;
  if (digits > MAX_FAST_DIGITS || k < -22 || k > 22 || exponent === HUGE)
    return slowNumber(b, start, p, out, at);
  const value = k >= 0 ? mantissa * POW10[k]! : mantissa / POW10[-k]!;
  out[at] = negative ? -value : value;
  return p;
}

/** The JSON number in b[start, end) into out[at] as JSON.parse reads it; `end`, or -1 when not finite. */
function slowNumber(b: Uint8Array, start: number, end: number, out: Float64Array, at: number): number {
  const value = Number(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1'));
  if (!Number.isFinite(value)) return -1;
  out[at] = value;
  return end;
}

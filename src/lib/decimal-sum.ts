// An exact sum of doubles as a decimal: each number counts as the decimal its shortest text
// spells (what JSON.stringify writes and what PostgreSQL's numeric reads from a JSON document),
// added without rounding. `service migrate` compares such sums with PostgreSQL's
// sum(numeric) of the same leaves, so both sides must agree to the last digit.

/** A decimal text without exponent, sign only when negative, no trailing zeros after the point. */
export function normalizeDecimal(text: string): string {
  let t = text.trim();
  const negative = t.startsWith('-');
  if (negative || t.startsWith('+')) t = t.slice(1);
  let [whole = '0', fraction = ''] = t.split('.');
  whole = whole.replace(/^0+(?=\d)/, '');
  fraction = fraction.replace(/0+$/, '');
  const body = fraction === '' ? whole : `${whole}.${fraction}`;
  return negative && /[1-9]/.test(body) ? `-${body}` : body;
}

const POWERS: bigint[] = [1n];
/** 10^n as a bigint, remembered (sums of many leaves ask for the same few powers). */
function pow10(n: number): bigint {
  for (let i = POWERS.length; i <= n; i++) POWERS.push(POWERS[i - 1]! * 10n);
  return POWERS[n]!;
}

export class DecimalSum {
  /** the sum is units × 10^-scale */
  private units = 0n;
  private scale = 0;

  add(value: number): void {
    if (Number.isSafeInteger(value)) {
      this.units += BigInt(value) * pow10(this.scale);
      return;
    }
    if (!Number.isFinite(value)) throw new Error(`${value} is not a finite number`);
    const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
    if (!m) throw new Error(`cannot read ${value}`);
    const digits = BigInt(`${m[2]}${m[3] ?? ''}`);
    const exponent = Number(m[4] ?? 0) - (m[3]?.length ?? 0); // value = digits × 10^exponent
    const signed = m[1] === '-' ? -digits : digits;
    if (-exponent > this.scale) {
      this.units *= pow10(-exponent - this.scale);
      this.scale = -exponent;
    }
    this.units += signed * pow10(exponent + this.scale);
  }

  toString(): string {
    const negative = this.units < 0n;
    const text = (negative ? -this.units : this.units).toString().padStart(this.scale + 1, '0');
    const whole = text.slice(0, text.length - this.scale);
    const fraction = text.slice(text.length - this.scale);
    return normalizeDecimal(`${negative ? '-' : ''}${whole}.${fraction}`);
  }
}

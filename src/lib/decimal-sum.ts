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

export class DecimalSum {
  /** the sum is units × 10^-scale */
  private units = 0n;
  private scale = 0;

  add(value: number): void {
    if (!Number.isFinite(value)) throw new Error(`${value} is not a finite number`);
    const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
    if (!m) throw new Error(`cannot read ${value}`);
    const digits = BigInt(`${m[2]}${m[3] ?? ''}`);
    const exponent = Number(m[4] ?? 0) - (m[3]?.length ?? 0); // value = digits × 10^exponent
    const signed = m[1] === '-' ? -digits : digits;
    if (-exponent > this.scale) {
      this.units *= 10n ** BigInt(-exponent - this.scale);
      this.scale = -exponent;
    }
    this.units += signed * 10n ** BigInt(exponent + this.scale);
  }

  toString(): string {
    const negative = this.units < 0n;
    const text = (negative ? -this.units : this.units).toString().padStart(this.scale + 1, '0');
    const whole = text.slice(0, text.length - this.scale);
    const fraction = text.slice(text.length - this.scale);
    return normalizeDecimal(`${negative ? '-' : ''}${whole}.${fraction}`);
  }
}

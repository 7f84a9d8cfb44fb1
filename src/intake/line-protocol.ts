// InfluxDB line protocol (the text InfluxDB 1.x and 2.x take on /write and /api/v2/write):
//
//   measurement[,tag=value...] field=value[,field=value...] [timestamp]
//
// One pass over the text, index by index: every character is looked at a bounded number of times,
// so the time is linear in the body whatever it holds, and a line longer than `maxLineLength` is
// refused as soon as the scan passes that length. Anything that is not line protocol throws a
// LineProtocolError naming the (1-based, physical) line; nothing else is ever thrown.
//
// Escapes, as InfluxDB reads them: in the measurement `\,` and `\ `; in tag keys, tag values and
// field keys `\,`, `\=` and `\ `; everywhere `\\` is one backslash, and a backslash before any other
// character is kept as it is. In string field values `\"` and `\\`. A string field value may hold
// line breaks; anywhere else a line break ends the line.

import { LineError } from './line-error';
import type { Precision } from '../config-listeners';
import { SLICE_BYTES, nextTurn } from './slices';
export type { Precision };

export type FieldValue =
  | { type: 'float'; value: number }
  | { type: 'integer'; value: number }
  | { type: 'unsigned'; value: number }
  | { type: 'string'; value: string }
  | { type: 'boolean'; value: boolean };

export interface LineSample {
  /** 1-based physical line number where the line starts */
  line: number;
  measurement: string;
  /** in the order written; a repeated tag key keeps its last value */
  tags: Array<[string, string]>;
  /** in the order written; a repeated field key keeps its last value */
  fields: Array<[string, FieldValue]>;
  /** epoch milliseconds (floored), or null when the line has no timestamp */
  timeMs: number | null;
}

export class LineProtocolError extends LineError {}

export interface ParseOptions {
  precision?: Precision;
  /** longest accepted line in UTF-16 units (default 262,144) */
  maxLineLength?: number;
}

export const DEFAULT_MAX_LINE_LENGTH = 256 * 1024;

/** The precision names of the 2.x API (`ns`, `us`, `ms`, `s`) and of 1.x (`n`, `u`, `ms`, `s`, `m`, `h`). */
export function parsePrecision(text: string | undefined, api: 1 | 2): Precision | null {
  if (text === undefined || text === '') return 'ns';
  if (api === 2) return text === 'ns' || text === 'us' || text === 'ms' || text === 's' ? text : null;
  switch (text) {
    case 'n':
    case 'ns':
      return 'ns';
    case 'u':
    case 'us':
      return 'us';
    case 'ms':
    case 's':
    case 'm':
    case 'h':
      return text;
    default:
      return null;
  }
}

const NL = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const QUOTE = 34;
const HASH = 35;
const COMMA = 44;
const EQUALS = 61;
const BACKSLASH = 92;

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;
const UINT64_MAX = 18446744073709551615n;

// Drop digits of (ns, us) or multiply (s, m, h) a timestamp to reach milliseconds.
const DROPPED_DIGITS: Record<Precision, number> = { ns: 6, us: 3, ms: 0, s: 0, m: 0, h: 0 };
const FACTORS: Record<Precision, number> = { ns: 1, us: 1, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
const UNSIGNED = /^\d+$/;
const NON_FINITE = /^[+-]?(?:nan|inf|infinity)$/i;
const TRUE_WORDS = new Set(['t', 'T', 'true', 'True', 'TRUE']);
const FALSE_WORDS = new Set(['f', 'F', 'false', 'False', 'FALSE']);

/** Scans one body; see parseLineProtocol. */
class Scanner {
  readonly text: string;
  pos = 0;
  line = 1;
  /** where the current line started (for the length limit) */
  lineStart = 0;
  readonly maxLineLength: number;
  readonly precision: Precision;

  constructor(text: string, options: ParseOptions) {
    this.text = text;
    this.maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
    this.precision = options.precision ?? 'ns';
  }

  fail(message: string): never {
    throw new LineProtocolError(this.line, message);
  }

  /** Refuses a line once the scan has gone past the length limit. */
  checkLength(): void {
    if (this.pos - this.lineStart > this.maxLineLength)
      this.fail(`line longer than ${this.maxLineLength} characters`);
  }

  atLineEnd(): boolean {
    if (this.pos >= this.text.length) return true;
    const c = this.text.charCodeAt(this.pos);
    return (
      c === NL ||
      (c === CR && (this.pos + 1 >= this.text.length || this.text.charCodeAt(this.pos + 1) === NL))
    );
  }

  skipSpaces(): void {
    while (this.pos < this.text.length) {
      const c = this.text.charCodeAt(this.pos);
      if (c !== SPACE && c !== TAB) break;
      this.pos++;
    }
    this.checkLength();
  }

  /** Moves past the line break (\n or \r\n) the scan stands on, if any. */
  nextLine(): void {
    if (this.pos < this.text.length && this.text.charCodeAt(this.pos) === CR) this.pos++;
    if (this.pos < this.text.length && this.text.charCodeAt(this.pos) === NL) this.pos++;
    this.line++;
    this.lineStart = this.pos;
  }

  /** Skips to the end of the line (a comment). */
  skipRestOfLine(): void {
    const end = this.text.indexOf('\n', this.pos);
    this.pos = end === -1 ? this.text.length : end;
  }

  /**
   * Reads an identifier (measurement, tag key or value, field key) up to one of its unescaped
   * stop characters, undoing the escapes. `equalsStops` is false for the measurement, where `=`
   * is an ordinary character.
   */
  identifier(equalsStops: boolean, kind: string, owner?: string): string {
    const { text } = this;
    let out = '';
    let chunkStart = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === COMMA || c === SPACE || c === TAB || c === NL || (equalsStops && c === EQUALS)) break;
      if (c === CR && this.atLineEnd()) break;
      if (c === BACKSLASH && this.pos + 1 < text.length) {
        const n = text.charCodeAt(this.pos + 1);
        const escapable = n === COMMA || n === SPACE || n === BACKSLASH || (equalsStops && n === EQUALS);
        if (escapable) {
          out += text.slice(chunkStart, this.pos) + text[this.pos + 1];
          this.pos += 2;
          chunkStart = this.pos;
          continue;
        }
        if (n === NL || n === CR) this.fail(`${describe(kind, owner)} ends with a backslash`);
      }
      this.pos++;
    }
    this.checkLength();
    out += text.slice(chunkStart, this.pos);
    if (out.length === 0) this.fail(`missing ${describe(kind, owner)}`);
    return out;
  }

  /** A double-quoted string field value; the scan stands on the opening quote. */
  quoted(field: string): string {
    const { text } = this;
    this.pos++;
    let out = '';
    let chunkStart = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === QUOTE) {
        out += text.slice(chunkStart, this.pos);
        this.pos++;
        this.checkLength();
        return out;
      }
      if (c === BACKSLASH && this.pos + 1 < text.length) {
        const n = text.charCodeAt(this.pos + 1);
        if (n === QUOTE || n === BACKSLASH) {
          out += text.slice(chunkStart, this.pos) + text[this.pos + 1];
          this.pos += 2;
          chunkStart = this.pos;
          continue;
        }
      }
      this.pos++;
      if ((this.pos & 0xfff) === 0) this.checkLength();
    }
    this.checkLength();
    return this.fail(`string value of field "${clip(field)}" has no closing quote`);
  }

  /** A bare field value (number or boolean) up to the next comma, space or line end. */
  bare(field: string): FieldValue {
    const { text } = this;
    const start = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === COMMA || c === SPACE || c === TAB || c === NL || c === CR) break;
      this.pos++;
    }
    this.checkLength();
    const raw = text.slice(start, this.pos);
    if (raw.length === 0) this.fail(`missing value of field "${clip(field)}"`);
    const last = raw.charCodeAt(raw.length - 1);
    if (last === 105 /* i */) {
      const digits = raw.slice(0, -1);
      if (!INTEGER.test(digits)) this.fail(`invalid integer value of field "${clip(field)}": ${clip(raw)}`);
      const big = BigInt(digits);
      if (big > INT64_MAX || big < INT64_MIN)
        this.fail(`integer value of field "${clip(field)}" is out of range: ${clip(raw)}`);
      return { type: 'integer', value: Number(digits) };
    }
    if (last === 117 /* u */) {
      const digits = raw.slice(0, -1);
      if (!UNSIGNED.test(digits)) this.fail(`invalid unsigned value of field "${clip(field)}": ${clip(raw)}`);
      if (BigInt(digits) > UINT64_MAX)
        this.fail(`unsigned value of field "${clip(field)}" is out of range: ${clip(raw)}`);
      return { type: 'unsigned', value: Number(digits) };
    }
    if (TRUE_WORDS.has(raw)) return { type: 'boolean', value: true };
    if (FALSE_WORDS.has(raw)) return { type: 'boolean', value: false };
    if (FLOAT.test(raw)) return { type: 'float', value: Number(raw) };
    if (NON_FINITE.test(raw))
      return {
        type: 'float',
        value: raw.toLowerCase().includes('nan') ? NaN : raw.startsWith('-') ? -Infinity : Infinity,
      };
    return this.fail(`invalid value of field "${clip(field)}": ${clip(raw)}`);
  }

  /** The optional timestamp, as epoch milliseconds. */
  timestamp(): number | null {
    const { text } = this;
    const start = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === SPACE || c === TAB || c === NL || c === CR) break;
      this.pos++;
    }
    this.checkLength();
    const raw = text.slice(start, this.pos);
    if (raw.length === 0) return null;
    if (!INTEGER.test(raw)) this.fail(`invalid timestamp: ${clip(raw)}`);
    const negative = raw.charCodeAt(0) === 45; // -
    const digits = negative || raw.charCodeAt(0) === 43 ? raw.slice(1) : raw;
    if (digits.length > 19 || (digits.length === 19 && outOfInt64(raw)))
      this.fail(`timestamp is out of range: ${clip(raw)}`);
    // Milliseconds from the decimal digits, without BigInt (this runs once per line): ns and us
    // drop their last 6 or 3 digits, and a negative time with a remainder is floored one further.
    const drop = DROPPED_DIGITS[this.precision];
    let ms: number;
    if (drop === 0) ms = Number(digits) * FACTORS[this.precision];
    else {
      const head = digits.length > drop ? Number(digits.slice(0, digits.length - drop)) : 0;
      ms = negative && /[1-9]/.test(digits.slice(-drop)) ? head + 1 : head;
    }
    return negative && ms !== 0 ? -ms : ms;
  }

  /** One line (the scan stands on its first character, not a blank or a comment). */
  sample(): LineSample {
    const line = this.line;
    const measurement = this.identifier(false, 'measurement');
    const tags: Array<[string, string]> = [];
    while (this.pos < this.text.length && this.text.charCodeAt(this.pos) === COMMA) {
      this.pos++;
      const key = this.identifier(true, 'tag key');
      if (this.text.charCodeAt(this.pos) !== EQUALS) this.fail(`tag "${clip(key)}" has no "=" and value`);
      this.pos++;
      const value = this.identifier(true, 'value of tag', key);
      setPair(tags, key, value);
    }
    const beforeSpace = this.pos;
    this.skipSpaces();
    if (this.pos === beforeSpace || this.atLineEnd()) this.fail('missing fields');
    const fields: Array<[string, FieldValue]> = [];
    for (;;) {
      const key = this.identifier(true, 'field key');
      if (this.text.charCodeAt(this.pos) !== EQUALS) this.fail(`field "${clip(key)}" has no "=" and value`);
      this.pos++;
      const value =
        this.text.charCodeAt(this.pos) === QUOTE
          ? { type: 'string' as const, value: this.quoted(key) }
          : this.bare(key);
      setPair(fields, key, value);
      if (this.pos < this.text.length && this.text.charCodeAt(this.pos) === COMMA) {
        this.pos++;
        continue;
      }
      break;
    }
    this.skipSpaces();
    let timeMs: number | null = null;
    if (!this.atLineEnd()) {
      timeMs = this.timestamp();
      this.skipSpaces();
      if (!this.atLineEnd()) this.fail('unexpected text after the timestamp');
    }
    return { line, measurement, tags, fields, timeMs };
  }

  /** Counts the line breaks a sample spanned (inside string values) so later lines keep their numbers. */
  countBreaks(from: number, to: number): void {
    let at = this.text.indexOf('\n', from);
    while (at !== -1 && at < to) {
      this.line++;
      at = this.text.indexOf('\n', at + 1);
    }
  }
}

function outOfInt64(raw: string): boolean {
  const big = BigInt(raw);
  return big > INT64_MAX || big < INT64_MIN;
}

function setPair<T>(pairs: Array<[string, T]>, key: string, value: T): void {
  for (const pair of pairs) {
    if (pair[0] === key) {
      pair[1] = value;
      return;
    }
  }
  pairs.push([key, value]);
}

function describe(kind: string, owner: string | undefined): string {
  return owner === undefined ? kind : `${kind} "${clip(owner)}"`;
}

/** At most 60 characters of a piece of input, for messages. */
function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Parses a body of line protocol. Blank lines and `#` comments are skipped; `\r\n` and `\n` both
 * end lines. Throws LineProtocolError (naming the line) for anything else that is not a valid line.
 */
export function parseLineProtocol(text: string, options: ParseOptions = {}): LineSample[] {
  const s = new Scanner(text, options);
  const out: LineSample[] = [];
  while (s.pos < text.length) step(s, out);
  return out;
}

/**
 * The same in slices of about `sliceChars` characters, the event loop free between them (large
 * bodies: docs/intake.md "Large bodies"); the same samples and the same errors.
 */
export async function parseLineProtocolSliced(
  text: string,
  options: ParseOptions = {},
  sliceChars = SLICE_BYTES,
): Promise<LineSample[]> {
  const s = new Scanner(text, options);
  const out: LineSample[] = [];
  let sliceEnd = sliceChars;
  while (s.pos < text.length) {
    step(s, out);
    if (s.pos >= sliceEnd) {
      sliceEnd = s.pos + sliceChars;
      await nextTurn();
    }
  }
  return out;
}

/** Reads one line (a sample, a comment or a blank line) from where the scanner stands. */
function step(s: Scanner, out: LineSample[]): void {
  const text = s.text;
  s.lineStart = s.pos;
  s.skipSpaces();
  if (s.atLineEnd()) {
    if (s.pos >= text.length) {
      s.pos = text.length;
      return;
    }
    s.nextLine();
    return;
  }
  if (text.charCodeAt(s.pos) === HASH) {
    s.skipRestOfLine();
    s.checkLength();
    s.nextLine();
    return;
  }
  const start = s.pos;
  const sample = s.sample();
  s.countBreaks(start, s.pos);
  out.push(sample);
  if (s.pos < text.length) s.nextLine();
}

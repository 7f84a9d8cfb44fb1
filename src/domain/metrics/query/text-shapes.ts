// Buckets of one key usually share their shape: the same keys in the same order, only the numbers
// differ. Once the query scanner (domain/metrics/query/columns.ts) has read a bucket's text in the plain form, this file
// turns that text into a shape: sticky regular expressions for the text between the leaves the query
// selects, each number a pattern. A later bucket with the same shape is then checked by the regular
// expression engine (compiled to machine code) and only its selected numbers are read, instead of
// walking every character in JavaScript: about seven times cheaper on a year of hourly buckets.
//
// A shape is learned only from a text whose numbers are all finite, so its leaves are all recorded
// leaves already; a matching bucket adds no path, and only its selected numbers are recorded (a
// non-finite one is skipped, as the scanner skips it). A text that differs anywhere else (a key,
// the order, a string, whitespace, a number not in JSON's form) fails the match and is scanned
// character by character as before.

/** A JSON number (bounded repeats such as `\\d{1,21}` make the match about twice as slow). */
const NUMBER = '-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?';

/** Texts longer than this are not made shapes: a pattern's size and compile time follow the text's. */
export const MAX_SHAPE_TEXT = 8192;
/** Shapes learned per scan; a series of ever-changing shapes is scanned character by character. */
export const MAX_SHAPES_LEARNED = 16;
/** Shapes tried on one bucket before scanning it. */
const SHAPES_TRIED = 4;
/**
 * Buckets that matched no shape, beyond those that matched one, after which a scan stops trying:
 * on a series whose shapes keep changing (or texts made to fail late in the match) the tries would
 * only add to the character scan.
 */
export const MAX_SHAPE_MISSES = 256;

const escapeRegExp = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

interface Shape<T> {
  /**
   * The whole text in one test: the part up to the first selected number (where `lastIndex` stops),
   * the rest in a lookahead. One call per bucket instead of one per segment: about a quarter less.
   */
  check: RegExp;
  /**
   * From selected number k to selected number k + 1 (only on texts the check took, so every
   * character is known but the numbers' lengths): `gaps[k]` holds, for each number from selected
   * number k on, the length of the text after it (a number ends at the first `,` or `}`). Walking
   * them is several times cheaper than a regular expression per selected number.
   */
  gaps: number[][];
  selected: T[];
}

export class TextShapes<T> {
  private readonly shapes: Array<Shape<T>> = [];
  private learned = 0;
  /** buckets that matched no shape minus those that matched one */
  private misses = 0;
  /** the selected numbers of the bucket being matched (recorded only once the whole text matched) */
  private values = new Float64Array(16);

  /**
   * Learns the shape of a text the scanner has just read in the plain form (objects of numbers,
   * keys without escapes). `selectedInfo` gives the record of a leaf path the query selects, or
   * null. Does nothing once MAX_SHAPES_LEARNED shapes were learned or for a long text.
   */
  learn(text: string, selectedInfo: (path: string) => T | null): void {
    if (this.learned >= MAX_SHAPES_LEARNED || text.length > MAX_SHAPE_TEXT || text.length <= 2) return;
    this.learned++;
    const segments: string[] = [];
    const selected: T[] = [];
    const keys: string[] = [];
    const gaps: number[][] = [];
    let gap: number[] | null = null; // the gaps after the last selected number
    let pattern = '';
    let i = 0;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        const close = text.indexOf('"', i + 1);
        if (close < 0) return;
        keys.push(text.slice(i + 1, close));
        pattern += escapeRegExp(text.slice(i, close + 2)); // the key and its colon
        if (gap) gap[gap.length - 1]! += close + 2 - i;
        i = close + 2;
        if (text[i] === '{') {
          pattern += '\\{';
          if (gap) gap[gap.length - 1]! += 1;
          i++;
        } else {
          const info = selectedInfo(keys.join('.'));
          if (info !== null) {
            segments.push(pattern);
            selected.push(info);
            pattern = '';
            if (gap) gaps.push(gap);
            gap = [0];
          } else if (gap) gap.push(0);
          pattern += NUMBER;
          const start = i;
          while (i < text.length && !',}'.includes(text[i]!)) i++;
          // The shape's leaves must all be leaves already (a text's non-finite numbers are not).
          if (!Number.isFinite(Number(text.slice(start, i)))) return;
          keys.pop();
        }
      } else {
        if (c === '}') keys.pop();
        pattern += escapeRegExp(c);
        if (gap) gap[gap.length - 1]! += 1;
        i++;
      }
    }
    segments.push(`${pattern}$`);
    const [first, ...rest] = segments;
    const shape: Shape<T> = {
      check: new RegExp(rest.length === 0 ? first! : `${first}(?=${rest.join('')})`, 'y'),
      gaps,
      selected,
    };
    if (this.match(shape, text) < 0) return; // a number JSON would not write, such as `1.`
    this.shapes.unshift(shape);
    if (this.shapes.length > SHAPES_TRIED) this.shapes.pop();
  }

  /**
   * Matches a text against the shapes learned, most recent first. On a match calls `record` for
   * each selected leaf in text order and returns true; false (nothing recorded) otherwise.
   */
  read(text: string, record: (info: T, value: number) => void): boolean {
    // `{}` (an empty bucket, common in sparse series) is no shape and no miss: the scan is cheap
    if (text.length <= 2 || this.misses > MAX_SHAPE_MISSES) return false;
    for (let s = 0; s < this.shapes.length; s++) {
      const shape = this.shapes[s]!;
      const n = this.match(shape, text);
      if (n < 0) continue;
      if (s > 0) {
        this.shapes.splice(s, 1);
        this.shapes.unshift(shape);
      }
      for (let k = 0; k < n; k++) {
        const value = this.values[k]!;
        if (Number.isFinite(value)) record(shape.selected[k]!, value);
      }
      if (this.misses > 0) this.misses--;
      return true;
    }
    if (this.shapes.length > 0) this.misses++;
    return false;
  }

  /** The number of selected values read into `values`, or -1 when the text is not of this shape. */
  private match(shape: Shape<T>, text: string): number {
    const { check, gaps } = shape;
    check.lastIndex = 0;
    if (!check.test(text)) return -1;
    const n = shape.selected.length;
    if (n > this.values.length) this.values = new Float64Array(n * 2);
    // The patterns after each selected number start with a number's pattern: the check has
    // checked every number read here.
    let at = check.lastIndex;
    for (let k = 0; k < n; k++) {
      if (k > 0) {
        const gap = gaps[k - 1]!;
        for (let g = 0; g < gap.length; g++) {
          let c = text.charCodeAt(at);
          while (c !== COMMA && c !== RBRACE && at < text.length) c = text.charCodeAt(++at);
          at += gap[g]!;
        }
      }
      this.values[k] = numberAt(text, at);
    }
    return n;
  }
}

/** The JSON number at `at` (checked by the caller's pattern): digits by hand, others by Number. */
function numberAt(text: string, at: number): number {
  let i = at;
  let c = text.charCodeAt(i);
  const negative = c === MINUS;
  if (negative) c = text.charCodeAt(++i);
  let whole = 0;
  for (; c >= DIGIT_0 && c <= DIGIT_9; c = text.charCodeAt(++i)) whole = whole * 10 + (c - DIGIT_0);
  if (c !== DOT && c !== LOWER_E && c !== UPPER_E && i - at <= 15) return negative ? -whole : whole;
  while (i < text.length && c !== COMMA && c !== RBRACE) c = text.charCodeAt(++i);
  return Number(text.slice(at, i));
}

const MINUS = 0x2d;
const DOT = 0x2e;
const COMMA = 0x2c;
const RBRACE = 0x7d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

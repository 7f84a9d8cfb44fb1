// JSON shapes of the metrics endpoints (SPEC 5.2, 5.3).
import type { SeriesText } from '../../domain/metrics/query/series';
import type { QueryAnswer, QueryTable } from '../../domain/metrics/query/query';
import { keepCompressedForms } from '../middleware/compress';

/**
 * `{"data":{"at":[...],"values":[...]}}` as the response's bytes: each bucket's values are already
 * the JSON text the store holds, spliced in without parsing them again. The pieces are encoded
 * straight into one buffer (sized for the worst case of 3 bytes per UTF-16 unit): joining 8,760
 * texts into one string and encoding that cost several times more (a year of hourly buckets).
 * Bucket starts are RFC 3339 texts of digits and signs: quoted as they are, once per labels array.
 */
export function presentSeriesJson(series: SeriesText): Buffer {
  const { at, values } = series;
  const labels = labelsJson(at);
  const derived = series.derived;
  const extra = derived ? derived.bytes : 0;
  // sized for one byte per UTF-16 unit (stored texts are mostly ASCII) and grown when a text may
  // not fit: a buffer sized for the worst case (3 bytes per unit) cost several times its writing,
  // a year of hourly buckets written into 4 MB of fresh memory of which a third was used
  let room = 48 + labels.length;
  for (let i = 0; i < values.length; i++) room += values[i]!.length + 1 + extra;
  let out = Buffer.allocUnsafe(room);
  let n = out.write('{"data":{"at":[', 0, 'latin1');
  n += labels.copy(out, n);
  n += out.write('],"values":[', n, 'latin1');
  for (let i = 0; i < values.length; i++) {
    const text = values[i]!;
    // the text, its members, a comma and the closing brackets
    const most = text.length * 3 + extra + 5;
    if (room - n < most) {
      const need = Buffer.byteLength(text, 'utf8') + extra + 5;
      if (room - n < need) {
        room = Math.max(room * 2, n + need);
        const bigger = Buffer.allocUnsafe(room);
        out.copy(bigger, 0, 0, n);
        out = bigger;
      }
    }
    if (i > 0) out[n++] = COMMA;
    n += out.write(text, n, 'utf8');
    if (derived) {
      // SPEC 15: the derived members go after the stored ones, inside the bucket's object
      n = derived.write(out, n - 1, i, text.length <= 2);
      out[n++] = RBRACE;
    }
  }
  n += out.write(']}}', n, 'latin1');
  const body = out.subarray(0, n);
  // SPEC 15: transponders skipped by the read, after `data` (the body is otherwise unchanged).
  if (!series.transponderErrors?.length) return body;
  return Buffer.concat([body.subarray(0, n - 1), Buffer.from(`,${metaJson(series.transponderErrors)}}`)]);
}

/**
 * presentSeriesJson for the engine's readSeriesAnswer: the answer may be kept and sent again, so
 * its compressed forms are kept with it.
 */
export const presentSeriesAnswer = (series: SeriesText): Buffer =>
  keepCompressedForms(presentSeriesJson(series));

/** `"meta":{"transponder_errors":[...]}`: the transponders a read skipped and why (SPEC 15). */
export function metaJson(errors: ReadonlyArray<unknown>): string {
  return `"meta":${JSON.stringify({ transponder_errors: errors })}`;
}

/**
 * The labels as the bytes of JSON array elements, kept per labels array: reads of one range share
 * theirs (domain/metrics/query/series.ts keeps recent ranges), so a dashboard's widgets encode them once.
 */
const encodedLabels = new WeakMap<readonly string[], Buffer>();

function labelsJson(at: readonly string[]): Buffer {
  const known = encodedLabels.get(at);
  if (known) return known;
  let room = 0;
  for (let i = 0; i < at.length; i++) room += at[i]!.length + 3;
  const out = Buffer.allocUnsafe(room);
  let n = 0;
  for (let i = 0; i < at.length; i++) {
    if (i > 0) out[n++] = COMMA;
    out[n++] = QUOTE;
    n += out.write(at[i]!, n, 'latin1');
    out[n++] = QUOTE;
  }
  const labels = out.subarray(0, n);
  encodedLabels.set(at, labels);
  return labels;
}

const COMMA = 0x2c;
const RBRACE = 0x7d;
const QUOTE = 0x22;

export function presentCreated(created: 'ok' | number) {
  return { data: { created } };
}

/**
 * `{"data":{...}}` of POST /api/v1/metrics/query, as JSON.stringify would write it, with `table`
 * (always the last member) written as text from its columns: no array per row. Labels are RFC 3339
 * texts (quoted as they are); cells are finite numbers (String() writes them as JSON does) or null.
 */
export function presentQueryJson(answer: QueryAnswer, transponderErrors?: ReadonlyArray<unknown>): string {
  const head = JSON.stringify({ data: answer.body }); // ends with the two closing braces
  const meta = transponderErrors?.length ? `,${metaJson(transponderErrors)}` : '';
  return `${head.slice(0, -2)},"table":${tableJson(answer.table)}}${meta}}`;
}

function tableJson({ at, columns }: QueryTable): string {
  const header = JSON.stringify(['at', ...columns.map((c) => c.path)]);
  const cursor = new Int32Array(columns.length);
  let rows = '';
  for (let i = 0; i < at.length; i++) {
    let row = (i === 0 ? '["' : ',["') + at[i]! + '"';
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      const k = cursor[c]!;
      if (k < column.size && column.index[k] === i) {
        row += ',' + String(column.value[k]!);
        cursor[c] = k + 1;
      } else row += ',null';
    }
    rows += row + ']';
  }
  return `{"columns":${header},"rows":[${rows}]}`;
}

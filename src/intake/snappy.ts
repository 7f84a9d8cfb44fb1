// Snappy's block format (the raw format, not the framed stream), as Prometheus remote write sends it:
// a varint of the uncompressed length, then literals and back-references. Decoding is written out
// here (about 60 lines) so that the declared length is read and checked against the body limit
// before anything is allocated, and so that every byte written is bounds-checked against that
// declared length: a body that claims more than it holds, or copies from before its start, is an
// error, never a larger buffer. Cost is linear in the output, which the limit bounds.

export class SnappyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnappyError';
  }
}

/** The uncompressed length a block declares, and where its elements start. */
export function snappyDeclaredLength(input: Uint8Array): { length: number; start: number } {
  let length = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (i >= input.length) throw new SnappyError('snappy: the body ends inside its length');
    const b = input[i]!;
    length += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) {
      if (length > 0xffffffff) throw new SnappyError('snappy: the declared length is out of range');
      return { length, start: i + 1 };
    }
  }
  throw new SnappyError('snappy: the declared length is out of range');
}

/**
 * Inflates a block. `maxLength` is checked against the declared length before any allocation;
 * `onTooLarge` makes the error the caller's (a 413).
 */
export function snappyUncompress(
  input: Uint8Array,
  maxLength: number,
  onTooLarge: (declared: number) => Error,
): Buffer {
  const { length, start } = snappyDeclaredLength(input);
  if (length > maxLength) throw onTooLarge(length);
  const out = Buffer.allocUnsafe(length);
  let o = 0;
  let i = start;
  const n = input.length;
  while (i < n) {
    const tag = input[i++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let len = tag >>> 2;
      if (len >= 60) {
        const bytes = len - 59;
        if (i + bytes > n) throw new SnappyError('snappy: a literal length is cut off');
        len = 0;
        for (let k = 0; k < bytes; k++) len += input[i + k]! * 2 ** (8 * k);
        i += bytes;
      }
      len += 1;
      if (i + len > n) throw new SnappyError('snappy: a literal runs past the end of the body');
      if (o + len > length) throw new SnappyError('snappy: the data is longer than its declared length');
      out.set(input.subarray(i, i + len), o);
      i += len;
      o += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      if (i + 1 > n) throw new SnappyError('snappy: a copy is cut off');
      len = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | input[i++]!;
    } else if (kind === 2) {
      if (i + 2 > n) throw new SnappyError('snappy: a copy is cut off');
      len = (tag >>> 2) + 1;
      offset = input[i]! | (input[i + 1]! << 8);
      i += 2;
    } else {
      if (i + 4 > n) throw new SnappyError('snappy: a copy is cut off');
      len = (tag >>> 2) + 1;
      offset = (input[i]! | (input[i + 1]! << 8) | (input[i + 2]! << 16)) + input[i + 3]! * 0x1000000;
      i += 4;
    }
    if (offset === 0 || offset > o) throw new SnappyError('snappy: a copy refers to data before the start');
    if (o + len > length) throw new SnappyError('snappy: the data is longer than its declared length');
    if (offset >= len) {
      out.copyWithin(o, o - offset, o - offset + len);
      o += len;
    } else {
      for (let k = 0; k < len; k++, o++) out[o] = out[o - offset]!; // an overlapping copy repeats
    }
  }
  if (o !== length) throw new SnappyError('snappy: the data is shorter than its declared length');
  return out;
}

/** A literal-only block (what tests need to build bodies; the service never compresses). */
export function snappyLiteralBlock(data: Uint8Array): Buffer {
  const parts: number[] = [];
  let len = data.length;
  do {
    parts.push((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
    len = Math.floor(len / 128);
  } while (len > 0);
  const chunks: Buffer[] = [Buffer.from(parts)];
  for (let from = 0; from < data.length; from += 65536) {
    const piece = data.subarray(from, from + 65536);
    const l = piece.length - 1;
    chunks.push(
      l < 60 ? Buffer.from([l << 2]) : Buffer.from([62 << 2, l & 0xff, (l >>> 8) & 0xff, (l >>> 16) & 0xff]),
      Buffer.from(piece),
    );
  }
  return Buffer.concat(chunks);
}

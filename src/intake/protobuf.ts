// A reader of protobuf's wire format: just what decoding Prometheus' WriteRequest and OTLP needs
// (varints, 64-bit fixed, length-delimited fields, skipping unknown fields). Every read is
// bounds-checked and fails with ProtobufError, so a truncated or hostile body is a 400, never a
// crash; nesting is bounded by the callers' fixed message shapes.

export class ProtobufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufError';
  }
}

export class ProtoReader {
  pos: number;
  readonly end: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  /** A varint as a double (exact up to 2^53; int64 negatives come out as large numbers). */
  varint(): number {
    let result = 0;
    let mul = 1;
    for (let k = 0; k < 10; k++) {
      if (this.pos >= this.end) throw new ProtobufError('protobuf: a varint is cut off');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    throw new ProtobufError('protobuf: a varint is longer than 10 bytes');
  }

  /** An int64 varint: negative values (two's complement, 10 bytes) come back negative. */
  int64(): number {
    const start = this.pos;
    const v = this.varint();
    if (this.pos - start === 10 && v >= 2 ** 63) return v - 2 ** 64;
    return v;
  }

  /** A key: field number and wire type. */
  tag(): { field: number; wire: number } {
    const key = this.varint();
    const field = Math.floor(key / 8);
    if (field === 0) throw new ProtobufError('protobuf: field number 0');
    return { field, wire: key % 8 };
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new ProtobufError('protobuf: a double is cut off');
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** fixed64 as a double (exact up to 2^53). */
  fixed64(): number {
    if (this.pos + 8 > this.end) throw new ProtobufError('protobuf: a fixed64 is cut off');
    const v = this.buf.readUInt32LE(this.pos) + this.buf.readUInt32LE(this.pos + 4) * 2 ** 32;
    this.pos += 8;
    return v;
  }

  /** fixed64 as an exact decimal string (OTLP's nanosecond times exceed 2^53). */
  fixed64String(): string {
    if (this.pos + 8 > this.end) throw new ProtobufError('protobuf: a fixed64 is cut off');
    const v = (BigInt(this.buf.readUInt32LE(this.pos + 4)) << 32n) | BigInt(this.buf.readUInt32LE(this.pos));
    this.pos += 8;
    return v.toString();
  }

  /** sfixed64 as a double. */
  sfixed64(): number {
    if (this.pos + 8 > this.end) throw new ProtobufError('protobuf: a sfixed64 is cut off');
    const v = this.buf.readUInt32LE(this.pos) + this.buf.readInt32LE(this.pos + 4) * 2 ** 32;
    this.pos += 8;
    return v;
  }

  /** The bounds of a length-delimited field. */
  bytes(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    if (len > this.end - start) throw new ProtobufError('protobuf: a field runs past the end of its message');
    this.pos = start + len;
    return [start, start + len];
  }

  string(): string {
    const [s, e] = this.bytes();
    return this.buf.toString('utf8', s, e);
  }

  sub(): ProtoReader {
    const [s, e] = this.bytes();
    return new ProtoReader(this.buf, s, e);
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) {
      if (this.pos + 8 > this.end) throw new ProtobufError('protobuf: a field is cut off');
      this.pos += 8;
    } else if (wire === 2) this.bytes();
    else if (wire === 5) {
      if (this.pos + 4 > this.end) throw new ProtobufError('protobuf: a field is cut off');
      this.pos += 4;
    } else throw new ProtobufError(`protobuf: unsupported wire type ${wire}`);
  }

  /** Packed repeated numbers (wire type 2) or one unpacked value, read by `one`. */
  repeated(wire: number, one: (r: ProtoReader) => number, out: number[]): void {
    if (wire === 2) {
      const r = this.sub();
      while (r.more()) out.push(one(r));
    } else out.push(one(this));
  }
}

/** A writer for the few messages the service answers and tests build. */
export class ProtoWriter {
  private chunks: Buffer[] = [];

  private raw(b: Buffer): this {
    this.chunks.push(b);
    return this;
  }

  private varintBytes(v: number): Buffer {
    const out: number[] = [];
    let n = v;
    if (n < 0) n += 2 ** 64; // only used for small negatives in tests
    do {
      out.push((n % 128) | (n >= 128 ? 0x80 : 0));
      n = Math.floor(n / 128);
    } while (n > 0);
    return Buffer.from(out);
  }

  varint(field: number, v: number): this {
    return this.raw(this.varintBytes(field * 8)).raw(this.varintBytes(v));
  }

  double(field: number, v: number): this {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    return this.raw(this.varintBytes(field * 8 + 1)).raw(b);
  }

  fixed64(field: number, v: number): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    return this.raw(this.varintBytes(field * 8 + 1)).raw(b);
  }

  bytes(field: number, b: Buffer): this {
    return this.raw(this.varintBytes(field * 8 + 2))
      .raw(this.varintBytes(b.length))
      .raw(b);
  }

  string(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, 'utf8'));
  }

  message(field: number, w: ProtoWriter): this {
    return this.bytes(field, w.finish());
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

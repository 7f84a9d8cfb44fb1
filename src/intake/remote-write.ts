// Prometheus remote write 1.0 (`POST /api/v1/write`): a snappy block holding a protobuf
// WriteRequest { repeated TimeSeries timeseries = 1; repeated MetricMetadata metadata = 3; },
// TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; },
// Label { string name = 1; string value = 2; }, Sample { double value = 1; int64 timestamp = 2; }.
//
// Mapping (docs/intake.md, "Prometheus remote write"): key = the `__name__` label with the other
// labels in series-key form (`node_load1,instance=pve1:9100,job=node`); the value goes under
// `value`:
// - a gauge (any other name):            track {value: {sum: v, count: 1}}, assert {value: {last: v}}
// - a counter or a histogram's/summary's
//   series (`_total`, `_count`, `_sum`, `_bucket`): assert {value: {last: v}} (the reading per bucket)
// Stale markers and other NaN or infinite values are skipped and counted.
import {
  MAX_TIME_MS,
  MIN_TIME_MS,
  MappingError,
  gaugePoints,
  keyProblem,
  seriesKey,
  type MappedBody,
} from './mapping';
import { type KnownKey, type MappedWire, WireBuilder, goodKey } from './line-wire';
import { hash53 } from '../lib/key-hash';
import { ProtoReader, ProtobufError } from './protobuf';
import { SLICE_BYTES, nextTurn } from './slices';

export class RemoteWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RemoteWriteError';
  }
}

const COUNTER_SUFFIX = /_(total|count|sum|bucket)$/;

/** Whether a series name is asserted as `last` (a cumulative reading) rather than tracked as a gauge. */
export function isCumulativeName(name: string): boolean {
  return COUNTER_SUFFIX.test(name);
}

/** Where a series' samples go: point objects (mapRemoteWrite), or a wire being built (mapRemoteWriteWire). */
interface Sink {
  readonly result: { samples: number; skippedNonFinite: number };
  /** series known by their labels' bytes (the wire way; null: every series is read in full) */
  readonly series: Map<string, SeriesKey> | null;
  /** the series' key entry (the wire way), made once per key */
  entry(key: string, index: number): SeriesKey;
  /** a gauge's sample: a track of {value: {sum, count}} and an assert of {value: {last}} */
  gauge(series: SeriesKey, atMs: number, value: number): void;
  /** a cumulative reading: an assert of {value: {last}} */
  reading(series: SeriesKey, atMs: number, value: number): void;
}

/** A series' key, checked, as the wire builder takes it (its text, hash and place in the wire being built). */
interface SeriesKey extends KnownKey {
  cumulative: boolean;
}

/**
 * Series seen before, by the bytes of their labels (when those come first, as Prometheus and
 * vmagent send them): their key without the labels read again, sorted and checked; and the
 * entries by key text, one per key. Bounded: both start over when full, between two bodies.
 */
const MAX_SERIES = 100_000;
const seriesByLabels = new Map<string, SeriesKey>();
const seriesByKey = new Map<string, SeriesKey>();

class PointSink implements Sink {
  readonly result: MappedBody = { points: [], samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
  readonly series = null;

  entry(key: string): SeriesKey {
    return { key, hash: 0, stamp: 0, index: -1, cumulative: false };
  }

  gauge(series: SeriesKey, atMs: number, value: number): void {
    gaugePoints(series.key, new Date(atMs).toISOString(), [['value', value]], this.result.points);
  }

  reading(series: SeriesKey, atMs: number, value: number): void {
    this.result.points.push({
      key: series.key,
      at: new Date(atMs).toISOString(),
      operation: 'assert',
      values: { value: { last: value } },
    });
  }
}

const VALUE = ['value'];

class WireSink implements Sink {
  readonly builder = new WireBuilder();
  readonly result: MappedWire = { wires: [], points: 0, samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
  private readonly one = [0];

  constructor(readonly series: Map<string, SeriesKey> | null) {
    // started over between bodies only: within one, a key has one entry (its place in the wire)
    if (seriesByKey.size >= MAX_SERIES || seriesByLabels.size >= MAX_SERIES) {
      seriesByKey.clear();
      seriesByLabels.clear();
    }
  }

  entry(key: string, index: number): SeriesKey {
    let found = seriesByKey.get(key);
    if (found === undefined) {
      if (!goodKey(key))
        throw new MappingError(index, 'key holds a lone surrogate (not well-formed Unicode)');
      found = { key, hash: hash53(key), stamp: 0, index: -1, cumulative: false };
      seriesByKey.set(key, found);
    }
    return found;
  }

  gauge(series: SeriesKey, atMs: number, value: number): void {
    this.builder.room(2);
    this.one[0] = value;
    this.builder.pair(this.builder.known(series), atMs, VALUE, this.one);
  }

  reading(series: SeriesKey, atMs: number, value: number): void {
    this.builder.room(1);
    this.one[0] = value;
    this.builder.asserted(this.builder.known(series), atMs, VALUE, this.one);
  }

  finish(): MappedWire {
    this.builder.finish();
    this.result.wires = this.builder.wires;
    this.result.points = this.builder.points;
    this.result.keyHashes = this.builder.keyHashes;
    return this.result;
  }
}

/** Reads a WriteRequest one series at a time. */
class RemoteWriteMapper<S extends Sink> {
  private readonly r: ProtoReader;
  private index = -1;

  constructor(
    body: Buffer,
    private readonly prefix: string,
    readonly sink: S,
  ) {
    this.r = new ProtoReader(body);
  }

  get pos(): number {
    return this.r.pos;
  }

  /** Maps the next series; false once the body is read. */
  next(): boolean {
    const r = this.r;
    try {
      while (r.more()) {
        const { field, wire } = r.tag();
        if (field !== 1 || wire !== 2) {
          r.skip(wire);
          continue;
        }
        this.index++;
        mapSeries(r.sub(), this.index, this.prefix, this.sink);
        return true;
      }
      return false;
    } catch (err) {
      if (err instanceof ProtobufError)
        throw new RemoteWriteError(
          this.index >= 0 ? `timeseries[${this.index}]: ${err.message}` : err.message,
        );
      throw err;
    }
  }
}

/** The points of an uncompressed WriteRequest; RemoteWriteError names the series that cannot be stored. */
export function mapRemoteWrite(body: Buffer, options: { keyPrefix?: string } = {}): MappedBody {
  const mapper = new RemoteWriteMapper(body, options.keyPrefix ?? '', new PointSink());
  while (mapper.next());
  return mapper.sink.result;
}

/** The same in slices of about `sliceBytes` of the body, the event loop free between them (large bodies). */
export async function mapRemoteWriteSliced(
  body: Buffer,
  options: { keyPrefix?: string } = {},
  sliceBytes = SLICE_BYTES,
): Promise<MappedBody> {
  const mapper = new RemoteWriteMapper(body, options.keyPrefix ?? '', new PointSink());
  await readSliced(mapper, sliceBytes);
  return mapper.sink.result;
}

/**
 * The same points in the write path's wire form (line-wire.ts, as line protocol's), which
 * `POST /api/v1/write` writes: no object per sample, no timestamp text, no second validation.
 */
export function mapRemoteWriteWire(body: Buffer, options: { keyPrefix?: string } = {}): MappedWire {
  const mapper = new RemoteWriteMapper(
    body,
    options.keyPrefix ?? '',
    new WireSink(options.keyPrefix ? null : seriesByLabels),
  );
  while (mapper.next());
  return mapper.sink.finish();
}

/** mapRemoteWriteWire in slices (large bodies). */
export async function mapRemoteWriteWireSliced(
  body: Buffer,
  options: { keyPrefix?: string } = {},
  sliceBytes = SLICE_BYTES,
): Promise<MappedWire> {
  const mapper = new RemoteWriteMapper(
    body,
    options.keyPrefix ?? '',
    new WireSink(options.keyPrefix ? null : seriesByLabels),
  );
  await readSliced(mapper, sliceBytes);
  return mapper.sink.finish();
}

async function readSliced<S extends Sink>(mapper: RemoteWriteMapper<S>, sliceBytes: number): Promise<void> {
  let sliceEnd = sliceBytes;
  while (mapper.next()) {
    if (mapper.pos >= sliceEnd) {
      sliceEnd = mapper.pos + sliceBytes;
      await nextTurn();
    }
  }
}

/**
 * Where a series' leading labels end, when no label comes after its other fields; else -1 (and
 * for a message this cannot read: the full read then names the fault as before).
 */
function labelsEnd(r: ProtoReader): number {
  const probe = new ProtoReader(r.buf, r.pos, r.end);
  let labelsUntil = r.pos;
  let end = -1; // set at the first field that is not a label
  try {
    while (probe.more()) {
      const { field, wire } = probe.tag();
      const label = field === 1 && wire === 2;
      if (label && end >= 0) return -1;
      probe.skip(wire);
      if (label) labelsUntil = probe.pos;
      else if (end < 0) end = labelsUntil;
    }
  } catch (err) {
    if (err instanceof ProtobufError) return -1;
    throw err;
  }
  return end < 0 ? labelsUntil : end;
}

function mapSeries(r: ProtoReader, index: number, prefix: string, sink: Sink): void {
  const result = sink.result;
  // a series seen before: found by its labels' bytes, which are then not read again
  let known: SeriesKey | undefined;
  let labels: string | null = null;
  if (sink.series !== null) {
    const end = labelsEnd(r);
    if (end > r.pos) {
      labels = r.buf.toString('latin1', r.pos, end);
      known = sink.series.get(labels);
      if (known !== undefined) r.pos = end;
    }
  }
  let name: string | null = null;
  const tags = new Map<string, string>();
  const samples: Array<[number, number]> = [];
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 2) {
      const l = r.sub();
      let k = '';
      let v = '';
      while (l.more()) {
        const t = l.tag();
        if (t.field === 1 && t.wire === 2) k = l.string();
        else if (t.field === 2 && t.wire === 2) v = l.string();
        else l.skip(t.wire);
      }
      if (k === '__name__') name = v;
      else if (k !== '' && v !== '') tags.set(k, v); // an empty label value is no label (Prometheus)
    } else if (field === 2 && wire === 2) {
      const s = r.sub();
      let value = 0;
      let ts = 0;
      while (s.more()) {
        const t = s.tag();
        if (t.field === 1 && t.wire === 1) value = s.double();
        else if (t.field === 2 && t.wire === 0) ts = s.int64();
        else s.skip(t.wire);
      }
      samples.push([value, ts]);
    } else r.skip(wire);
  }
  if (samples.length === 0) return;
  if (known === undefined) {
    if (name === null || name === '')
      throw new RemoteWriteError(`timeseries[${index}] has no __name__ label`);
    const key = prefix + seriesKey(name, [...tags]);
    const problem = keyProblem(key);
    if (problem) throw new RemoteWriteError(`timeseries[${index}]: ${problem}`);
    known = sink.entry(key, index);
    known.cumulative = isCumulativeName(name);
    if (labels !== null) sink.series!.set(labels, known);
  }
  const series = known;
  for (const [value, ts] of samples) {
    result.samples++;
    if (!Number.isFinite(value)) {
      result.skippedNonFinite++;
      continue;
    }
    if (!(ts >= MIN_TIME_MS && ts <= MAX_TIME_MS))
      throw new RemoteWriteError(
        `timeseries[${index}] (${name}): timestamp ${ts} ms is outside the accepted range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)`,
      );
    if (series.cumulative) sink.reading(series, ts, value);
    else sink.gauge(series, ts, value);
  }
}

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
  acceptedTime,
  gaugePoints,
  keyProblem,
  seriesKey,
  type IntakePoint,
  type MappedBody,
} from './mapping';
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

/** Reads a WriteRequest one series at a time. */
class RemoteWriteMapper {
  readonly result: MappedBody = { points: [], samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
  private readonly r: ProtoReader;
  private index = -1;

  constructor(
    body: Buffer,
    private readonly prefix: string,
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
        mapSeries(r.sub(), this.index, this.prefix, this.result.points, this.result);
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
  const mapper = new RemoteWriteMapper(body, options.keyPrefix ?? '');
  while (mapper.next());
  return mapper.result;
}

/** The same in slices of about `sliceBytes` of the body, the event loop free between them (large bodies). */
export async function mapRemoteWriteSliced(
  body: Buffer,
  options: { keyPrefix?: string } = {},
  sliceBytes = SLICE_BYTES,
): Promise<MappedBody> {
  const mapper = new RemoteWriteMapper(body, options.keyPrefix ?? '');
  let sliceEnd = sliceBytes;
  while (mapper.next()) {
    if (mapper.pos >= sliceEnd) {
      sliceEnd = mapper.pos + sliceBytes;
      await nextTurn();
    }
  }
  return mapper.result;
}

function mapSeries(
  r: ProtoReader,
  index: number,
  prefix: string,
  out: IntakePoint[],
  result: MappedBody,
): void {
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
  if (name === null || name === '') throw new RemoteWriteError(`timeseries[${index}] has no __name__ label`);
  const key = prefix + seriesKey(name, [...tags]);
  const problem = keyProblem(key);
  if (problem) throw new RemoteWriteError(`timeseries[${index}]: ${problem}`);
  const cumulative = isCumulativeName(name);
  for (const [value, ts] of samples) {
    result.samples++;
    if (!Number.isFinite(value)) {
      result.skippedNonFinite++;
      continue;
    }
    const at = acceptedTime(ts);
    if (at === null)
      throw new RemoteWriteError(
        `timeseries[${index}] (${name}): timestamp ${ts} ms is outside the accepted range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)`,
      );
    if (cumulative) out.push({ key, at, operation: 'assert', values: { value: { last: value } } });
    else gaugePoints(key, at, [['value', value]], out);
  }
}

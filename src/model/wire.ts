// Accepted points in the compact form that crosses threads and fills the write log
// (domain/metrics/point-wire.ts encodes and decodes it), and the settings a point is bucketed by.

export interface WirePoints {
  keys: string[];
  pathLists: string[][];
  /** per point: atMs, then key index x 2^24 + path list index x 4 + flags (1 assert, 2 untracked) */
  meta: Float64Array;
  /** every point's leaf values, in order */
  values: Float64Array;
  /**
   * Per path list, where a pair's assert part starts (absent: no list is a pair). A point on a list
   * whose entry is below the list's length (and without the assert flag) is a pair: a track of the
   * leaves before that index, then an assert of the others, at the same key and time. It stands for
   * those two points everywhere (decodePoints gives both, the system key counts two); the two parts
   * spell different leaves. The line protocol writes each line as one (intake/line-wire.ts).
   */
  assertFrom?: number[];
  /**
   * The metric writer's thread only: each key's number in the thread's key table
   * (drivers/embedded/writer-protocol.ts), valid within table epoch `keyEpoch`, so a window finds
   * a key's state by number instead of by its text.
   */
  keyNumbers?: Int32Array;
  keyEpoch?: number;
  /**
   * The event loop only: each key's hash53 (lib/key-hash.ts), when the line-protocol reader had
   * them at hand (intake/line-direct.ts). Neither logged nor handed to the writer's thread.
   */
  keyHashes?: readonly number[];
}

/** What bucketing a source's points needs: its id, zone, week start and granularities. */
export interface BucketSettings {
  id: string;
  timeZone: string;
  /** 1 = Monday .. 7 = Sunday */
  beginningOfWeek: number;
  granularities: readonly string[];
}

/** One source's points of a group commit, as a store with a write log takes them. */
export interface LoggedPoints {
  settings: BucketSettings;
  wire: WirePoints;
}

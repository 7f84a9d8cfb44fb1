// Accepted points in the compact form that crosses threads and fills the write log
// (domain/metrics/point-wire.ts encodes and decodes it), and the settings a point is bucketed by.

export interface WirePoints {
  keys: string[];
  pathLists: string[][];
  /** per point: atMs, then key index x 2^24 + path list index x 4 + flags (1 assert, 2 untracked) */
  meta: Float64Array;
  /** every point's leaf values, in order */
  values: Float64Array;
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

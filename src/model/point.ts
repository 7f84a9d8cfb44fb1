// A metric point once validated (src/domain/metrics/ingest/points.ts): what the wire codec
// (point-wire.ts), the merger (window/) and every store's door take.
export interface ValidPoint {
  key: string;
  atMs: number;
  /** operation `assert` (sets leaves) rather than `track` (adds to them) */
  assert: boolean;
  untracked: boolean;
  /** leaf dot paths and their values, index for index; each path once (the later spelling wins) */
  paths: string[];
  values: number[];
}

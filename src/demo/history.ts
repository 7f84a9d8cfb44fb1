// Walks a time range in slots and hands out the shop's points in batches sized for the batch
// endpoint (at most 10,000 points, and a body well under the 1 MiB default limit).
import { type Point, type ShopModel, slotPoints } from './shop';

/** Points per batch request: about 400 bytes each keeps a body near 600 KB. */
export const BATCH_POINTS = 1500;
const MINUTE = 60_000;

/**
 * Slot length at an instant: minutes for the last two days (fine views are of recent data),
 * five minutes before that (`1m` buckets older than two days then hold every fifth minute, which
 * is documented in docs/demo.md; every coarser granularity is exact).
 */
export function slotLength(ms: number, now: number): number {
  return now - ms <= 2 * 86_400_000 ? MINUTE : 5 * MINUTE;
}

/**
 * The points of [from, to) in batches. Slots are aligned to their length; the last slot ends at
 * `to` and is shorter, so the newest bucket is still filling, as it would be on a live shop.
 */
export function* historyBatches(model: ShopModel, from: number, to: number): Generator<Point[]> {
  let batch: Point[] = [];
  let start = from;
  while (start < to) {
    const length = slotLength(start, model.now);
    const aligned = Math.floor(start / length) * length;
    const end = Math.min(aligned + length, to);
    const points = slotPoints(model, start, (end - start) / 1000);
    for (const point of points) batch.push(point);
    if (batch.length >= BATCH_POINTS) {
      yield batch;
      batch = [];
    }
    start = end;
  }
  if (batch.length > 0) yield batch;
}

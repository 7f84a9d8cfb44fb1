// Walks a time range in slots and hands out the shop's points in batches sized for the batch
// endpoint (at most 10,000 points, and a body well under the 1 MiB default limit).
import { type Point, type ShopModel, slotPoints } from './shop';

/** Points per batch request: about 400 bytes each keeps a body near 600 KB. */
export const BATCH_POINTS = 1500;
const MINUTE = 60_000;
const DAY = 86_400_000;

/**
 * Slot length at an instant: minutes for the last two days (fine views are of recent data), five
 * minutes up to a week back, a quarter of an hour before that. Buckets finer than the slot then
 * hold data only at slot starts (docs/demo.md); 1h and coarser buckets are exact everywhere. This
 * keeps the month at about 55,000 points, a few seconds of ingest on a small machine.
 */
export function slotLength(ms: number, now: number): number {
  const age = now - ms;
  if (age <= 2 * DAY) return MINUTE;
  return age <= 7 * DAY ? 5 * MINUTE : 15 * MINUTE;
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

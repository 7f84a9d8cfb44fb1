// The server-wide cap on request-body bytes held in memory at once (SPEC 9). Every body reader
// charges what it keeps (plain bytes, inflated bytes, a fixed cost per gunzip stream and per
// multipart parse) and gives it back when its request is done; past the cap a request is refused
// with 503 + Retry-After instead of the process growing without bound (issue 9: 300 unfinished gzip
// bodies held 114 MB, 200 unfinished 1 MB bodies 192 MB).
import { unavailable } from '../../errors';

export interface BodyBudget {
  readonly limit: number;
  /** bytes charged right now, over all requests */
  readonly used: number;
  /** A per-request account; close() gives back everything it took. */
  open(): BodyCharge;
}

export interface BodyCharge {
  /** Charges `bytes`, or throws the 503 when the server-wide cap would be passed. */
  take(bytes: number): void;
  close(): void;
}

export const BUSY_MESSAGE = 'Too many request bodies in flight, retry later';

export function createBodyBudget(limit: number): BodyBudget {
  let used = 0;
  return {
    limit,
    get used() {
      return used;
    },
    open() {
      let held = 0;
      let closed = false;
      return {
        take(bytes) {
          if (closed) return;
          if (used + bytes > limit) throw unavailable(BUSY_MESSAGE, 1);
          used += bytes;
          held += bytes;
        },
        close() {
          if (closed) return;
          closed = true;
          used -= held;
          held = 0;
        },
      };
    },
  };
}

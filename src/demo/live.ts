// While the demo serves, the shop keeps selling: every few seconds the points of the time passed
// since the last send are written, so the newest bucket fills up under the viewer's eyes and
// auto-refresh has something to show. The values come from the same model as the back-fill.
import { sendHistory } from './setup';
import type { ShopModel } from './shop';

export interface LiveFeed {
  stop(): Promise<void>;
}

export function startLiveFeed(
  base: string,
  auth: Record<string, string>,
  model: ShopModel,
  options: { from: number; everyMs?: number; now?: () => number; onError?: (err: Error) => void },
): LiveFeed {
  const now = options.now ?? Date.now;
  let last = options.from;
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    const to = now();
    // One send at a time: while one is slow, the next tick covers the longer span.
    if (stopped || running || to <= last) return;
    const from = last;
    last = to;
    running = sendHistory(base, auth, model, from, to).then(
      () => {
        running = null;
      },
      (err: Error) => {
        running = null;
        options.onError?.(err);
      },
    );
  };
  const timer = setInterval(tick, options.everyMs ?? 5000);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

// The pace of an evaluation round. A round runs on the event loop that serves ingest, so it works in
// short turns (at most TURN_MS each) and after each turn leaves the loop alone for PAUSE_RATIO times
// as long (a timer, not setImmediate: with setImmediate the round took the loop back at once and a
// request arriving at any moment of a round found a turn in progress, which moved ingest's p99).
// With a turn of 1 ms and a pause of 3 ms a round holds the loop a quarter of its wall time at most;
// its wall time grows about fourfold (a round of 0.4 s of work takes about 1.6 s, well within the
// minute of `[alerts] interval`) and every monitor is still judged at the round's one `now`.

/** The longest a round works without letting the event loop serve others (ms). */
export const TURN_MS = 1;
/** The pause after a turn, as a multiple of the turn's length. */
export const PAUSE_RATIO = 3;
/** The longest pause (ms): a turn lengthened by a slow wait (a read) does not stall the round. */
const MAX_PAUSE_MS = 20;

export class Pacer {
  /** the start of the current stretch of work (after a pause or a wait) */
  private since = performance.now();
  /** the work of the current turn before its last wait (ms) */
  private earlier = 0;
  /**
   * the longest turn seen (ms of work between two pauses). Waits for reads (`wait`) are not counted:
   * the loop is free meanwhile; nor is a read's own synchronous step (the store's rows and their
   * assembly, run when the writer's answer arrives, before the wait returns).
   */
  longestMs = 0;
  /** the round's step at the end of the longest turn (set by the round: `step`) */
  longestStep = '';
  /** what the round is doing (named in `longestStep`) */
  step = '';
  /** the turns' work (ms) */
  busyMs = 0;
  /** pauses taken */
  pauses = 0;

  constructor(
    private readonly turnMs = TURN_MS,
    private readonly pauseRatio = PAUSE_RATIO,
  ) {}

  private used(): number {
    return this.earlier + (performance.now() - this.since);
  }

  /** The work of the current turn so far (ms). */
  spentMs(): number {
    return this.used();
  }

  /** Pauses once the current turn has used up its time; returns at once otherwise. */
  async turn(): Promise<void> {
    const used = this.used();
    if (used < this.turnMs) return;
    this.account(used);
    this.pauses += 1;
    const ms = Math.min(MAX_PAUSE_MS, Math.ceil(used * this.pauseRatio));
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.since = performance.now();
  }

  /** Ends the turn now and pauses (at least `minMs`): e.g. to let another connection finish. */
  async rest(minMs: number): Promise<void> {
    const used = this.used();
    this.account(used);
    this.pauses += 1;
    const ms = Math.max(minMs, Math.min(MAX_PAUSE_MS, Math.ceil(used * this.pauseRatio)));
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.since = performance.now();
  }

  /** Awaits a read: the work so far stays in the turn, the wait is not counted. */
  async wait<T>(read: Promise<T>): Promise<T> {
    this.earlier = this.used();
    try {
      return await read;
    } finally {
      this.since = performance.now();
    }
  }

  /** Counts the turn in progress at the round's end. */
  finish(): void {
    this.account(this.used());
  }

  private account(used: number) {
    this.earlier = 0;
    this.busyMs += used;
    if (used > this.longestMs) {
      this.longestMs = used;
      this.longestStep = this.step;
    }
  }
}

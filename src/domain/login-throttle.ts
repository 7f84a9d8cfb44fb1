// Slows down password guessing (SPEC 3), per e-mail and per client address. An attempt is counted
// as a failure *before* its password is checked, synchronously, so parallel guesses see each other:
// 200 concurrent wrong passwords get at most FREE checks before the rest are refused with 429.
// A success forgets the e-mail's failures and takes back the address's count of that attempt.
// Memory is bounded; when a map is full it evicts the least harmful entry (one that blocks nothing),
// never an active block, so a flood of other e-mails cannot reset a victim's block.
// Kept in memory: a restart forgets it, which is acceptable for a single-process service.
import {
  ADDRESS_RULE,
  EMAIL_RULE,
  addressGroup,
  blockedFor,
  isStale,
  waitSeconds,
  withFailure,
  withoutFailure,
  type LoginThrottle,
  type ThrottleEntry as Entry,
  type ThrottleRule,
} from '../model/login-throttle';

// The rules live in src/model so that the cluster's table (storage/pg/login-throttle.ts) applies them too.
export {
  ADDRESS_RULE,
  EMAIL_RULE,
  addressGroup,
  type LoginThrottle,
  type ThrottleRule,
} from '../model/login-throttle';

/** Failure counters for one kind of key, bounded to rule.maxEntries. */
export class FailureCounters {
  private readonly entries = new Map<string, Entry>(); // oldest failure first

  constructor(private readonly rule: ThrottleRule) {}

  get size(): number {
    return this.entries.size;
  }

  /** Milliseconds the key is still blocked for (0 when it is not). */
  blockedFor(key: string, now: number): number {
    return blockedFor(this.entries.get(key), now);
  }

  fail(key: string, now: number): void {
    const entry = this.entries.get(key);
    if (!entry && this.entries.size >= this.rule.maxEntries) this.evict(now);
    this.entries.delete(key); // re-inserted last: the map stays ordered by last failure
    this.entries.set(key, withFailure(entry, this.rule, now));
  }

  /** Takes back one failure; the block ends when the count is back under the free allowance. */
  undo(key: string): void {
    const entry = this.entries.get(key);
    if (entry) this.entries.set(key, withoutFailure(entry, this.rule));
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  private stale(entry: Entry, now: number): boolean {
    return isStale(entry, this.rule, now);
  }

  /**
   * Drops one entry, least harmful first: the oldest that blocks nothing and never would on its
   * next failure (under the allowance, or stale); else the unblocked one with the fewest failures;
   * else, when every entry blocks, the block that ends soonest.
   */
  private evict(now: number): void {
    let fewest: [string, Entry] | null = null;
    let soonest: [string, Entry] | null = null;
    for (const item of this.entries) {
      const [, entry] = item;
      const blocked = entry.blockedUntil > now;
      if (!blocked && (entry.failures < this.rule.free - 1 || this.stale(entry, now))) {
        this.entries.delete(item[0]);
        return;
      }
      if (!blocked && (!fewest || entry.failures < fewest[1].failures)) fewest = item;
      if (blocked && (!soonest || entry.blockedUntil < soonest[1].blockedUntil)) soonest = item;
    }
    const victim = fewest ?? soonest;
    if (victim) this.entries.delete(victim[0]);
  }
}

export function createLoginThrottle(
  rules: { email?: ThrottleRule; address?: ThrottleRule } = {},
): LoginThrottle {
  const emails = new FailureCounters(rules.email ?? EMAIL_RULE);
  const addresses = new FailureCounters(rules.address ?? ADDRESS_RULE);
  return {
    async begin(email, address, now) {
      const emailKey = email.toLowerCase();
      const addressKey = addressGroup(address);
      const wait = Math.max(emails.blockedFor(emailKey, now), addresses.blockedFor(addressKey, now));
      if (wait > 0) return waitSeconds(wait);
      emails.fail(emailKey, now);
      addresses.fail(addressKey, now);
      return 0;
    },
    async succeeded(email, address) {
      emails.forget(email.toLowerCase());
      addresses.undo(addressGroup(address));
    },
  };
}

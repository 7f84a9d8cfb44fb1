// Slows down password guessing (SPEC 3), per e-mail and per client address. An attempt is counted
// as a failure *before* its password is checked, synchronously, so parallel guesses see each other:
// 200 concurrent wrong passwords get at most FREE checks before the rest are refused with 429.
// A success forgets the e-mail's failures and takes back the address's count of that attempt.
// Memory is bounded; when a map is full it evicts the least harmful entry (one that blocks nothing),
// never an active block, so a flood of other e-mails cannot reset a victim's block.
// Kept in memory: a restart forgets it, which is acceptable for a single-process service.

export interface ThrottleRule {
  /** failures allowed before the first block */
  free: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** failures older than this (with no block running) no longer count */
  forgetAfterMs: number;
  maxEntries: number;
}

export const EMAIL_RULE: ThrottleRule = {
  free: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxEntries: 10_000,
};

// An address may fail more (several people behind one NAT), but one that sprays many accounts
// is slowed like a single account.
export const ADDRESS_RULE: ThrottleRule = { ...EMAIL_RULE, free: 20 };

interface Entry {
  failures: number;
  blockedUntil: number;
  lastFailure: number;
}

/** Failure counters for one kind of key, bounded to rule.maxEntries. */
export class FailureCounters {
  private readonly entries = new Map<string, Entry>(); // oldest failure first

  constructor(private readonly rule: ThrottleRule) {}

  get size(): number {
    return this.entries.size;
  }

  /** Milliseconds the key is still blocked for (0 when it is not). */
  blockedFor(key: string, now: number): number {
    const entry = this.entries.get(key);
    return entry && entry.blockedUntil > now ? entry.blockedUntil - now : 0;
  }

  fail(key: string, now: number): void {
    let entry = this.entries.get(key);
    if (entry && this.stale(entry, now)) entry.failures = 0;
    if (!entry) {
      if (this.entries.size >= this.rule.maxEntries) this.evict(now);
      entry = { failures: 0, blockedUntil: 0, lastFailure: now };
    }
    entry.failures += 1;
    entry.lastFailure = now;
    const over = entry.failures - this.rule.free;
    if (over >= 0)
      entry.blockedUntil =
        now + Math.min(this.rule.maxDelayMs, this.rule.baseDelayMs * 2 ** Math.min(over, 40));
    this.entries.delete(key); // re-inserted last: the map stays ordered by last failure
    this.entries.set(key, entry);
  }

  /** Takes back one failure; the block ends when the count is back under the free allowance. */
  undo(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.failures = Math.max(0, entry.failures - 1);
    if (entry.failures < this.rule.free) entry.blockedUntil = 0;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  private stale(entry: Entry, now: number): boolean {
    return entry.blockedUntil <= now && now - entry.lastFailure > this.rule.forgetAfterMs;
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

export interface LoginThrottle {
  /**
   * Called before the password is checked. Returns 0 and counts the attempt as a failure of the
   * e-mail and of the address, or returns the seconds to wait (and counts nothing) while blocked.
   * One atomic unit: the check and the count happen together, so parallel guesses see each other.
   */
  begin(email: string, address: string, now: number): Promise<number>;
  /** The password was right: forgets the e-mail's failures, takes back the address's count. */
  succeeded(email: string, address: string): Promise<void>;
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
      if (wait > 0) return Math.max(1, Math.ceil(wait / 1000));
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

/**
 * The key of a client address: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64 prefix,
 * since one host commonly holds a whole /64.
 */
export function addressGroup(address: string): string {
  const plain = address.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (mapped) return mapped[1]!;
  if (!plain.includes(':')) return plain;
  const [head = '', tail] = plain.split('::', 2);
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros =
    tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  const groups = [...left, ...zeros, ...right].slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16));
  return `${groups.join(':')}::/64`;
}

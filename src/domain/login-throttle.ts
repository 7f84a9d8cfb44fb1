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

/** The failures of one key (an e-mail or an address group). */
export interface ThrottleEntry {
  failures: number;
  blockedUntil: number;
  lastFailure: number;
}
type Entry = ThrottleEntry;

/** Milliseconds an entry still blocks for at `now` (0 when it does not). */
export function blockedFor(entry: ThrottleEntry | undefined, now: number): number {
  return entry && entry.blockedUntil > now ? entry.blockedUntil - now : 0;
}

/** The seconds a client is told to wait for a block of `ms` milliseconds (at least 1). */
export const waitSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** No block running and the last failure older than the rule's forgetAfterMs: it no longer counts. */
export function isStale(entry: ThrottleEntry, rule: ThrottleRule, now: number): boolean {
  return entry.blockedUntil <= now && now - entry.lastFailure > rule.forgetAfterMs;
}

/** The entry after one more failure at `now`: a stale count starts again; past the allowance, a doubling block. */
export function withFailure(
  entry: ThrottleEntry | undefined,
  rule: ThrottleRule,
  now: number,
): ThrottleEntry {
  const failures = (entry && !isStale(entry, rule, now) ? entry.failures : 0) + 1;
  const over = failures - rule.free;
  const blockedUntil =
    over >= 0
      ? now + Math.min(rule.maxDelayMs, rule.baseDelayMs * 2 ** Math.min(over, 40))
      : (entry?.blockedUntil ?? 0);
  return { failures, blockedUntil, lastFailure: now };
}

/** The entry with one failure taken back; the block ends when the count is back under the allowance. */
export function withoutFailure(entry: ThrottleEntry, rule: ThrottleRule): ThrottleEntry {
  const failures = Math.max(0, entry.failures - 1);
  return { ...entry, failures, blockedUntil: failures < rule.free ? 0 : entry.blockedUntil };
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

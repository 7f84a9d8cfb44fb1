// The login throttle's rules (SPEC 3) as pure functions of one key's entry: what the in-memory
// throttle (domain/login-throttle.ts) and the cluster's shared table (storage/pg/login-throttle.ts)
// both apply, so the two answer alike. The keys: the lower-cased e-mail and addressGroup(address).

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

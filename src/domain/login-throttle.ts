// Slows down password guessing: after FREE_FAILURES failed logins for one email, further attempts
// are refused with 429 for a delay that doubles per failure (capped), until a success resets it.
// Kept in memory: a restart forgets it, which is acceptable for a single-process service.

const FREE_FAILURES = 5;
const BASE_DELAY_MS = 1_000;
const MAX_DELAY_MS = 15 * 60_000;
const MAX_TRACKED = 10_000;

interface Entry {
  failures: number;
  blockedUntil: number;
}

export interface LoginThrottle {
  /** seconds to wait when the email is currently blocked, else 0 */
  retryAfter(email: string, now: number): number;
  recordFailure(email: string, now: number): void;
  recordSuccess(email: string): void;
}

export function createLoginThrottle(): LoginThrottle {
  const entries = new Map<string, Entry>();
  return {
    retryAfter(email, now) {
      const entry = entries.get(email.toLowerCase());
      if (!entry || entry.blockedUntil <= now) return 0;
      return Math.max(1, Math.ceil((entry.blockedUntil - now) / 1000));
    },
    recordFailure(email, now) {
      const key = email.toLowerCase();
      const entry = entries.get(key) ?? { failures: 0, blockedUntil: 0 };
      entry.failures += 1;
      if (entry.failures >= FREE_FAILURES) {
        const delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (entry.failures - FREE_FAILURES));
        entry.blockedUntil = now + delay;
      }
      entries.delete(key);
      entries.set(key, entry);
      // Bound memory under a spray of random emails: forget the oldest entries.
      if (entries.size > MAX_TRACKED) entries.delete(entries.keys().next().value!);
    },
    recordSuccess(email) {
      entries.delete(email.toLowerCase());
    },
  };
}

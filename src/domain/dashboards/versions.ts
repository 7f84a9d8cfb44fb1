// Optimistic concurrency for dashboards and groups (docs/dashboards.md, "Saving over someone
// else's change"). A PUT may name the version it was edited from: the `updated_at` it read, or
// `If-Match` with the ETag of its GET. A stale one is refused with 409 naming who changed the row
// and when; a PUT with neither overwrites, as before.
import { conflict } from '../../errors';
import { formatTimestamp, parseTimestamp } from '../../shared/time';

/** What a PUT says it was edited from; both undefined when it says nothing. */
export interface ExpectedVersion {
  /** the body's `updated_at` as sent (a string, else reported as a field error before this) */
  updatedAt?: string;
  /** the `If-Match` header as sent */
  ifMatch?: string;
}

interface Versioned {
  updatedAt: number;
  updatedBy?: string | null;
}

/** The ETag of a row's version: its update time in milliseconds, strong and quoted. */
export const etagOf = (row: Versioned): string => `"${row.updatedAt}"`;

/** Whether a PUT named a version at all. */
export const namesVersion = (expected: ExpectedVersion): boolean =>
  expected.updatedAt !== undefined || expected.ifMatch !== undefined;

/**
 * The time a change made at `now` is stored with: every save gets a version of its own. A save in
 * the same second as the version it replaces (or at an earlier clock) lands at the next whole
 * second, because `updated_at` is compared to the second: otherwise a client still holding the
 * replaced version would pass as current, whether the save in between named a version or not.
 */
export function nextUpdatedAt(current: Versioned, now: number): number {
  if (Math.floor(now / 1000) > Math.floor(current.updatedAt / 1000)) return now;
  return (Math.floor(current.updatedAt / 1000) + 1) * 1000;
}

/** `If-Match` holds when one of its tags (or `*`) is the row's; weak tags compare by value. */
function ifMatchHolds(header: string, row: Versioned): boolean {
  const current = etagOf(row);
  return header.split(',').some((raw) => {
    const tag = raw.trim().replace(/^W\//, '');
    return tag === '*' || tag === current;
  });
}

/** `updated_at` holds when it names the same second as the stored version. */
function updatedAtHolds(sent: string, row: Versioned): boolean {
  const at = parseTimestamp(sent);
  return at !== null && Math.floor(at / 1000) === Math.floor(row.updatedAt / 1000);
}

/** Throws 409 when the PUT names a version that is no longer the stored one. */
/**
 * The checks of a PUT or DELETE on a lockable, versioned row (dashboards, monitors), in their
 * order: 409 `lockedMessage` when it is locked and the request does not unlock it, then
 * checkVersion's 409 when the request names a version that is no longer the stored one.
 */
export async function checkChangeable(
  row: Versioned & { locked: boolean },
  unlocks: boolean,
  expected: ExpectedVersion,
  lockedMessage: string,
  what: string,
  nameOf: (userId: string) => Promise<string | undefined>,
): Promise<void> {
  if (row.locked && !unlocks) throw conflict(lockedMessage);
  await checkVersion(row, expected, what, nameOf);
}

export async function checkVersion(
  row: Versioned,
  expected: ExpectedVersion,
  what: string,
  nameOf: (userId: string) => Promise<string | undefined>,
): Promise<void> {
  const stale =
    (expected.ifMatch !== undefined && !ifMatchHolds(expected.ifMatch, row)) ||
    (expected.updatedAt !== undefined && !updatedAtHolds(expected.updatedAt, row));
  if (!stale) return;
  const who = (row.updatedBy && (await nameOf(row.updatedBy))) || 'someone else';
  throw conflict(
    `${what} was changed by ${who} at ${formatTimestamp(row.updatedAt)} after you loaded it: ` +
      'reload it, or send the change again without updated_at or If-Match to overwrite',
  );
}

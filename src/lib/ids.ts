// Ids are lower-case UUIDs; an upper-case spelling names the same id (SPEC section 2).
import { randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const newId = (): string => randomUUID();

/** The canonical (lower-case) id, or null when the text is not a UUID. */
export function normalizeId(value: unknown): string | null {
  if (typeof value !== 'string' || value.length !== 36 || !UUID.test(value)) return null;
  return value.toLowerCase();
}

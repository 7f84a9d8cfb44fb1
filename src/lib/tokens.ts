// Token strings: a kind prefix + 43 base64url characters (32 random bytes). Only the SHA-256 hash
// and the last 5 characters are ever stored; the value is shown once, at creation.
import crypto, { createHash, randomBytes } from 'node:crypto';

export const USER_TOKEN_PREFIX = 'svc_uat_';
export const SOURCE_TOKEN_PREFIX = 'svc_sat_';

export interface MintedToken {
  value: string;
  hash: string;
  last5: string;
}

export function mintToken(prefix: string): MintedToken {
  const value = prefix + randomBytes(32).toString('base64url');
  return { value, hash: hashToken(value), last5: value.slice(-5) };
}

// One-shot crypto.hash (Node 20.12+) costs less than half of a Hash object; every request
// with a token hashes it.
const oneShotHash = typeof crypto.hash === 'function' ? crypto.hash : null;

export function hashToken(value: string): string {
  if (oneShotHash) return oneShotHash('sha256', value, 'hex');
  return createHash('sha256').update(value).digest('hex');
}

const TOKEN_SHAPE = /^svc_(uat|sat)_[A-Za-z0-9_-]{43}$/;

/** The kind of a well-formed token string, or null (so junk never reaches the database). */
export function tokenKind(value: string): 'user' | 'source' | null {
  const m = TOKEN_SHAPE.exec(value);
  if (!m) return null;
  return m[1] === 'uat' ? 'user' : 'source';
}

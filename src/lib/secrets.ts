// Secrets at rest (database source passwords and connection URLs): AES-256-GCM with a 32-byte key
// from config `secrets.key` / SERVICE_SECRET_KEY, or else a key file created once with mode 0600
// in the data directory. A stored secret reads `enc:v1:<base64 of iv | tag | ciphertext>`; anything
// else is a plaintext left by an older version, which start-up encrypts (server.ts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const PREFIX = 'enc:v1:';
export const KEY_FILE = 'secret.key';

export interface SecretBox {
  encrypt(plain: string): string;
  /** the plaintext of an encrypted secret; a plaintext (not yet migrated) passes through */
  decrypt(stored: string): string;
  isEncrypted(stored: string): boolean;
}

/** A 32-byte key from its text: 64 hex digits or base64 of 32 bytes; null when it is neither. */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  return b.length === 32 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(t) ? b : null;
}

/** The configured key, or the data directory's key file (created 0600 on first start). */
export function loadSecretKey(configured: string | null, dataDir: string): Buffer {
  if (configured) {
    const key = parseSecretKey(configured);
    if (!key) throw new Error('secrets.key must be 32 bytes as 64 hex digits or base64');
    return key;
  }
  const file = path.join(dataDir, KEY_FILE);
  try {
    const key = parseSecretKey(readFileSync(file, 'utf8'));
    if (!key) throw new Error(`${KEY_FILE} in the data directory does not hold a 32-byte key`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  // 'wx': never overwrite a key another process created meanwhile (it would orphan its secrets)
  try {
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadSecretKey(null, dataDir);
    throw err;
  }
}

export function createSecretBox(key: Buffer): SecretBox {
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    decrypt(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
    isEncrypted: (stored) => stored.startsWith(PREFIX),
  };
}

/** The config fields of a database source that hold secrets. */
export const SECRET_FIELDS = ['password', 'url'] as const;

/** A copy of `config` with its secret fields encrypted (already encrypted ones kept). */
export function encryptSecrets(box: SecretBox, config: Record<string, unknown>): Record<string, unknown> {
  const out = { ...config };
  for (const field of SECRET_FIELDS) {
    const value = out[field];
    if (typeof value === 'string' && !box.isEncrypted(value)) out[field] = box.encrypt(value);
  }
  return out;
}

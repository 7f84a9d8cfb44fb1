// Token strings: shape, hashing and recognition (SPEC section 3).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  hashToken,
  mintToken,
  SOURCE_TOKEN_PREFIX,
  tokenKind,
  USER_TOKEN_PREFIX,
} from '../../src/lib/tokens';

describe('tokens', () => {
  test('minted tokens: prefix + 43 base64url characters, SHA-256 hex hash, last 5 characters', () => {
    for (const prefix of [USER_TOKEN_PREFIX, SOURCE_TOKEN_PREFIX]) {
      const t = mintToken(prefix);
      assert.ok(t.value.startsWith(prefix));
      assert.match(t.value.slice(prefix.length), /^[A-Za-z0-9_-]{43}$/);
      assert.equal(t.hash, createHash('sha256').update(t.value, 'utf8').digest('hex'));
      assert.match(t.hash, /^[0-9a-f]{64}$/);
      assert.equal(t.last5, t.value.slice(-5));
      assert.equal(t.last5.length, 5);
    }
  });

  test('prefixes are the documented ones', () => {
    assert.equal(USER_TOKEN_PREFIX, 'svc_uat_');
    assert.equal(SOURCE_TOKEN_PREFIX, 'svc_sat_');
  });

  test('every mint is different', () => {
    const values = new Set(Array.from({ length: 200 }, () => mintToken(USER_TOKEN_PREFIX).value));
    assert.equal(values.size, 200);
  });

  test('hashToken is the SHA-256 of the exact string', () => {
    assert.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.notEqual(hashToken('abc'), hashToken('abc '));
  });

  test('tokenKind recognizes well-formed tokens only', () => {
    const body = 'A'.repeat(42) + '-';
    assert.equal(tokenKind(`svc_uat_${body}`), 'user');
    assert.equal(tokenKind(`svc_sat_${body}`), 'source');
    assert.equal(tokenKind(mintToken(USER_TOKEN_PREFIX).value), 'user');
    assert.equal(tokenKind(mintToken(SOURCE_TOKEN_PREFIX).value), 'source');
    for (const junk of [
      '',
      'svc_uat_',
      `svc_uat_${'A'.repeat(42)}`,
      `svc_uat_${'A'.repeat(44)}`,
      `svc_xat_${body}`,
      `SVC_UAT_${body}`,
      `svc_uat_${'A'.repeat(42)}=`,
      `svc_uat_${'A'.repeat(42)}+`,
      ` svc_uat_${body}`,
      `svc_uat_${body}\n`,
      "svc_uat_' OR 1=1 --",
    ]) {
      assert.equal(tokenKind(junk), null, JSON.stringify(junk));
    }
  });
});

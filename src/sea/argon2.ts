// Stand-in for the `@node-rs/argon2` package inside the single executable (build.mjs aliases the
// package to this file). The package picks its binding from node_modules when it is imported, which
// the executable has none of; here each call goes to the addon that loadNativeAddons extracted and
// loaded, so importing stays free of work and the data directory can be known first.
import type * as Argon2 from '@node-rs/argon2';
import { loadedNativeAddon } from './natives';

type Binding = typeof Argon2;

function binding(): Binding {
  const addon = loadedNativeAddon('argon2');
  if (addon === undefined)
    throw new Error('argon2 addon not loaded: call loadNativeAddons(dataDir) at start-up');
  return addon as Binding;
}

// The package declares these as const enums; these objects carry the same values.
export const Algorithm = Object.freeze({ Argon2d: 0, Argon2i: 1, Argon2id: 2 });
export const Version = Object.freeze({ V0x10: 0, V0x13: 1 });

export const hash: Binding['hash'] = (...args) => binding().hash(...args);
export const hashSync: Binding['hashSync'] = (...args) => binding().hashSync(...args);
export const hashRaw: Binding['hashRaw'] = (...args) => binding().hashRaw(...args);
export const hashRawSync: Binding['hashRawSync'] = (...args) => binding().hashRawSync(...args);
export const verify: Binding['verify'] = (...args) => binding().verify(...args);
export const verifySync: Binding['verifySync'] = (...args) => binding().verifySync(...args);
export const parseOptions: Binding['parseOptions'] = (...args) => binding().parseOptions(...args);

export default { Algorithm, Version, hash, hashSync, hashRaw, hashRawSync, verify, verifySync, parseOptions };

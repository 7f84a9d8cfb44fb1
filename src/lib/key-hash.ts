// The 53-bit hash the intake's cardinality limit keeps of each key (intake/key-limit.ts), also
// computed over a key's text in a body (intake/line-direct.ts), so both give the same number; the
// embedded writer's client finds a key's slot by it too (drivers/embedded/writer-client.ts), taking
// the reader's hashes instead of hashing each key of a body again.

/** cyrb53: a 53-bit string hash (public domain, bryc); collisions at 100,000 keys ~ 1 in 10^6. */
export function hash53(text: string): number {
  return hash53Range(text, 0, text.length);
}

/** hash53 of text[from, to), without cutting it out. */
export function hash53Range(text: string, from: number, to: number): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

// Leaf path lists compared by content (model/point-wire.ts): consecutive points mostly spell the same
// leaves, so the wire encoder compares a point's paths with the last list before hashing them.

export function samePaths(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

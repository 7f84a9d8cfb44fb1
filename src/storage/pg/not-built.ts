// A PostgreSQL repository that is not written yet: every method rejects, naming itself. Used only
// while cluster mode's repositories land one module at a time (docs/cluster.md part 3).
export function notBuilt<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_target, method) => () =>
      Promise.reject(new Error(`${name}.${String(method)} is not built on PostgreSQL yet`)),
  });
}

// The code the metric writer's thread runs, as a script for `new Worker(code, { eval: true })`.
// Here (npm start, tests: TypeScript through tsx) it registers tsx's loader in the new thread and
// imports embedded/writer-thread.ts; build.mjs swaps this module for one returning the bundled thread.
export function writerThreadCode(): string {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./writer-thread.ts', import.meta.url).href;
  return `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
}

// The code the batch parser's worker thread runs, as a script for `new Worker(code, { eval: true })`.
// Here (npm start, tests: TypeScript through tsx) it registers tsx's loader in the new thread and
// imports domain/metrics/ingest/batch-worker.ts; build.mjs swaps this module for one returning the bundled worker.
export function batchWorkerCode(): string {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./batch-worker.ts', import.meta.url).href;
  return `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
}

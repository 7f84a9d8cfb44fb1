// Baseline for bench/ingest.ts: a bare Koa handler that reads and parses the same JSON body and
// answers 201, with nothing else (no auth, no validation, no storage).
import http from 'node:http';
import Koa from 'koa';

const app = new Koa();
app.use(async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  JSON.parse(Buffer.concat(chunks).toString('utf8'));
  ctx.status = 201;
  ctx.body = { data: { created: 'ok' } };
});
const server = http.createServer(app.callback());
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object')
    process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

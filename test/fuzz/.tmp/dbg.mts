import fc from 'fast-check';
import { fuzzRequests } from '/work/wt/sec-rest/test/fuzz/generators';
import { seedFiles } from '/work/wt/sec-rest/test/fuzz/sqlite-files';
const reqs = fc.sample(fuzzRequests(seedFiles()), { seed: 20261122, numRuns: 10500 });
for (const i of [107, 798, 995, 2258]) { const r = reqs[i]!; const b = r.body!; const m = /filename="([^"]*)"/.exec(b.toString('latin1')); console.log(i, r.auth, JSON.stringify(m?.[1]).slice(0,80), b.length, /name="(\w+)"; filename/.exec(b.toString('latin1'))?.[1], b.toString('latin1').includes('--fuzzboundary7MA4YWxkTrZu0gW--'), (b.toString('latin1').match(/filename=/g)||[]).length); }

// POST /monitors/preview through the real server: an unsaved monitor run over past data, with the
// series it watches, each rule's bands, where it would have fired, and the sentence that says so.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { monitorBody } from '../helpers/monitors';

const MIN = 60_000;

describe('monitor preview', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  const base = Math.floor(Date.now() / MIN) * MIN - 180 * MIN;
  const now = base + 60 * MIN + 30_000;

  before(async () => {
    server = await startTestServer({}, { now: () => now, alertsTimer: false });
    agent = await createProjectWithToken(server);
    // An hour of minutes: 10, except two spells above 90 (minutes 20-22 and 40), one gap (30).
    const values: Array<[number, number]> = [];
    for (let m = 0; m < 60; m++) {
      if (m === 30) continue;
      values.push([m, (m >= 20 && m <= 22) || m === 40 ? 95 : 10]);
    }
    for (const [m, load] of values) {
      const res = await request(
        server,
        'POST',
        '/api/v1/metrics',
        { key: 'cpu', at: new Date(base + m * MIN + 5_000).toISOString(), values: { load } },
        { token: agent.sourceToken, sourceId: agent.sourceId },
      );
      assert.equal(res.status, 201, res.text);
    }
  });
  after(() => server.stop());

  test('series, bands, where it would have fired, and the summary', async () => {
    const body = {
      ...monitorBody(agent.sourceId, {
        alerts: [
          {
            id: 'a1b2c3d4-0000-4000-8000-000000000001',
            analysis_strategy: 'threshold',
            settings: { value: 90 },
          },
          { analysis_strategy: 'range', settings: { min: 0, max: 50 } },
        ],
      }),
      from: new Date(base).toISOString(),
      to: new Date(base + 60 * MIN).toISOString(),
    };
    const res = await request(server, 'POST', '/api/v1/monitors/preview', body, { token: agent.userToken });
    assert.equal(res.status, 200, res.text);
    const data = res.body.data;
    assert.equal(data.series.length, 1);
    const s = data.series[0];
    assert.equal(s.key, 'cpu');
    assert.deepEqual(s.labels, {});
    assert.equal(s.at.length, 60);
    assert.equal(s.at[0], base);
    assert.equal(s.values[30], null, 'a missing bucket is null');
    assert.equal(s.values[21], 95);
    const [threshold, range] = data.rules;
    assert.equal(threshold.id, 'a1b2c3d4-0000-4000-8000-000000000001');
    assert.equal(threshold.analysis_strategy, 'threshold');
    assert.deepEqual(threshold.bands.upper.slice(0, 2), [90, 90]);
    assert.equal(threshold.bands.lower, undefined);
    assert.deepEqual(threshold.fired_at, [base + 20 * MIN, base + 40 * MIN]);
    assert.deepEqual([range.bands.lower[0], range.bands.upper[0]], [0, 50]);
    assert.equal(data.fired_count, 2);
    assert.equal(data.summary, 'would have fired twice in the last hour');
    assert.equal(await monitorsCount(), 0, 'nothing is saved');
  });

  test('the default range is the last 7 days; the same validation as a save', async () => {
    const res = await request(server, 'POST', '/api/v1/monitors/preview', monitorBody(agent.sourceId), {
      token: agent.userToken,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.summary, 'would have fired twice in the last 7 days');
    const bad = await request(
      server,
      'POST',
      '/api/v1/monitors/preview',
      monitorBody(agent.sourceId, { alerts: [{ analysis_strategy: 'hampel', settings: { k: -1 } }] }),
      { token: agent.userToken },
    );
    assert.equal(bad.status, 422);
    assert.ok(
      bad.body.errors['alerts[0].settings.window'] && bad.body.errors['alerts[0].settings.k'],
      bad.text,
    );
    const backwards = await request(
      server,
      'POST',
      '/api/v1/monitors/preview',
      { ...monitorBody(agent.sourceId), from: new Date(now).toISOString(), to: new Date(base).toISOString() },
      { token: agent.userToken },
    );
    assert.equal(backwards.status, 422);
    assert.ok(backwards.body.errors.from);
  });

  async function monitorsCount() {
    const list = await request(server, 'GET', '/api/v1/monitors', undefined, { token: agent.userToken });
    return list.body.data.length;
  }
});

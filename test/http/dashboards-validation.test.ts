// Dashboards over HTTP: every rejected field is a 422 naming it; source selection; projects disabled.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { createDashboard, dashboardBody, setupOrganization, type DashboardOrg } from '../helpers/dashboards';

const kpi = (extra: Record<string, unknown> = {}) => ({
  id: 'kpi-1',
  type: 'kpi',
  path: 'count',
  function: 'sum',
  ...extra,
});
const grid = (...widgets: unknown[]) => ({ payload: { grid: widgets } });

// [what, fields added to a valid create body (undefined removes one), expected 422 errors]
type Case = [string, Record<string, unknown>, Record<string, string[]>];
const INVALID: Case[] = [
  ['name missing', { name: undefined }, { name: ['is required'] }],
  ['name blank', { name: '   ' }, { name: ['must not be blank'] }],
  ['name too long', { name: 'n'.repeat(256) }, { name: ['must be at most 255 characters'] }],
  ['name not a string', { name: 42 }, { name: ['must be a string'] }],
  ['key missing', { key: undefined }, { key: ['is required'] }],
  ['key empty', { key: '' }, { key: ['must not be empty'] }],
  ['key blank', { key: '   ' }, { key: ['must not be blank'] }],
  ['key too long', { key: 'k'.repeat(256) }, { key: ['must be at most 255 characters'] }],
  ['visibility not a boolean', { visibility: 'yes' }, { visibility: ['must be true or false'] }],
  ['locked not a boolean', { locked: 1 }, { locked: ['must be true or false'] }],
  ['position negative', { position: -1 }, { position: ['must be 0 or more'] }],
  ['position fractional', { position: 1.5 }, { position: ['must be an integer'] }],
  ['position a string', { position: '3' }, { position: ['must be an integer'] }],
  [
    'default_timeframe malformed',
    { default_timeframe: '1 day' },
    {
      default_timeframe: [
        'must be a count and a unit such as 24h, 7d or 1mo (units s, m, h, d, w, mo, q, y)',
      ],
    },
  ],
  [
    'default_timeframe zero',
    { default_timeframe: '0d' },
    {
      default_timeframe: [
        'must be a count and a unit such as 24h, 7d or 1mo (units s, m, h, d, w, mo, q, y)',
      ],
    },
  ],
  [
    'default_granularity malformed',
    { default_granularity: 'hourly' },
    {
      default_granularity: [
        'must be a count and a unit such as 24h, 7d or 1mo (units s, m, h, d, w, mo, q, y)',
      ],
    },
  ],
  [
    'default_granularity not allowed by the source',
    { default_granularity: '5m' },
    { default_granularity: ["must be one of the source's granularities: 1m, 1h, 1d, 1w, 1mo, 1q, 1y"] },
  ],
  [
    'group_id unknown',
    { group_id: '00000000-0000-4000-8000-000000000000' },
    { group_id: ['must be the id of a dashboard group of this organization, or null'] },
  ],
  [
    'group_id malformed',
    { group_id: 'g1' },
    { group_id: ['must be the id of a dashboard group of this organization, or null'] },
  ],
  ['group_id a number', { group_id: 5 }, { group_id: ['must be a dashboard group id or null'] }],
  [
    'no source at all',
    { source: undefined },
    { source: ['is required: send source {type, id}, source_type and source_id, or database_id'] },
  ],
  ['source not an object', { source: 'db' }, { source: ['must be an object {type, id}'] }],
  [
    'source.type unknown',
    { source: { type: 'file', id: 'x' } },
    { 'source.type': ['must be one of database, project'] },
  ],
  [
    'source_type without source_id',
    { source: undefined, source_type: 'database' },
    { source_id: ['is required with source_type'] },
  ],
  [
    'source_id unknown',
    { source: undefined, source_type: 'database', source_id: '00000000-0000-4000-8000-000000000000' },
    { source_id: ['must be the id of a database source of this organization'] },
  ],
  [
    'source_type unknown',
    { source: undefined, source_type: 'cluster', source_id: 'x' },
    { source_type: ['must be one of database, project'] },
  ],
  ['payload not an object', { payload: [] }, { payload: ['must be an object'] }],
  ['payload null', { payload: null }, { payload: ['must be an object'] }],
  ['grid not a list', { payload: { grid: 'x' } }, { 'payload.grid': ['must be a list of widgets'] }],
  [
    'widget function',
    grid(kpi({ function: 'avg' })),
    { 'payload.grid[kpi-1].function': ['must be one of sum, mean, min, max'] },
  ],
  [
    'widget type',
    grid(kpi({ type: 'pie' })),
    {
      'payload.grid[kpi-1].type': [
        'must be one of kpi, timeseries, category, table, text, list, distribution, heatmap, group',
      ],
    },
  ],
  [
    'widget geometry over 12 columns',
    grid(kpi({ x: 6, w: 7 })),
    { 'payload.grid[kpi-1].w': ['x + w must be at most 12 (the grid has 12 columns)'] },
  ],
  ['widget w zero', grid(kpi({ w: 0 })), { 'payload.grid[kpi-1].w': ['must be at least 1'] }],
  [
    'widget ids repeat',
    grid(kpi(), kpi({ y: 2 })),
    { 'payload.grid[kpi-1].id': ['must be unique in the grid'] },
  ],
  ['widget id missing', grid({ type: 'text' }), { 'payload.grid[0].id': ['is required'] }],
  ['widget not an object', grid(7), { 'payload.grid[0]': ['must be a widget object'] }],
  [
    'timeseries chart_type',
    grid({ id: 'ts', type: 'timeseries', paths: ['a'], chart_type: 'pie' }),
    { 'payload.grid[ts].chart_type': ['must be one of line, area, bar, dots'] },
  ],
  [
    'timeseries legend',
    grid({ id: 'ts', type: 'timeseries', paths: ['a'], legend: 'on' }),
    { 'payload.grid[ts].legend': ['must be true or false'] },
  ],
  [
    'category path wildcard in the middle',
    grid({ id: 'c', type: 'category', path: 'a.*.b' }),
    {
      'payload.grid[c].path': [
        'must be a dot path such as count or country.US; only a final .* wildcard is allowed',
      ],
    },
  ],
  [
    'table without paths',
    grid({ id: 't', type: 'table' }),
    { 'payload.grid[t].paths': ['is required (or series rows)'] },
  ],
  [
    'series expression naming a later row',
    grid({ id: 's', type: 'timeseries', series: [{ kind: 'expression', expression: 'a * 2' }] }),
    { 'payload.grid[s].series[0].expression': ['Unknown variable a: only earlier rows (none) can be used'] },
  ],
  [
    'series row path',
    grid({ id: 's', type: 'table', series: [{ kind: 'path', path: 'a*' }] }),
    {
      'payload.grid[s].series[0].path': [
        'must be a dot path such as count or country.*; * only as a whole segment',
      ],
    },
  ],
  [
    'list sort',
    grid({ id: 'l', type: 'list', path: 'a.*', sort: 'shuffle' }),
    { 'payload.grid[l].sort': ['must be one of desc, asc, alpha, alpha_desc'] },
  ],
  [
    'text alignment',
    grid({ id: 't', type: 'text', alignment: 'middle' }),
    { 'payload.grid[t].alignment': ['must be one of left, center, right'] },
  ],
  [
    'list limit',
    grid({ id: 'l', type: 'list', path: 'a.*', limit: -3 }),
    { 'payload.grid[l].limit': ['must be at least 1'] },
  ],
  ['segments not a list', { segments: {} }, { segments: ['must be a list of segments'] }],
  [
    'segment type',
    { segments: [{ name: 's', type: 'radio' }] },
    { 'segments[0].type': ['must be one of select, text'] },
  ],
  [
    'segment default not an item',
    { segments: [{ name: 's', default_value: 'x', groups: [{ items: [{ value: 'y' }] }] }] },
    { 'segments[0].default_value': ["must be the value of one of the segment's items"] },
  ],
];

function bodyWith(org: DashboardOrg, fields: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = { ...dashboardBody(org), ...fields };
  for (const [k, value] of Object.entries(fields)) if (value === undefined) delete body[k];
  return body;
}

describe('dashboard validation', () => {
  let server: TestServer;
  let org: DashboardOrg;
  let existing: Record<string, any>;

  before(async () => {
    server = await startTestServer();
    org = await setupOrganization(server);
    existing = await createDashboard(server, org.userToken, dashboardBody(org));
  });
  after(() => server.stop());

  test(`the table holds ${INVALID.length} invalid bodies`, () => assert.ok(INVALID.length >= 20));

  for (const [what, fields, errors] of INVALID) {
    test(`POST: ${what} -> 422`, async () => {
      const res = await request(server, 'POST', '/api/v1/dashboards', bodyWith(org, fields), {
        token: org.userToken,
      });
      assert.deepEqual([res.status, res.body], [422, { errors }]);
    });
  }

  const updatable = INVALID.filter(([, fields]) => !Object.values(fields).includes(undefined));
  for (const [what, fields, errors] of updatable) {
    test(`PUT: ${what} -> 422, nothing stored`, async () => {
      const path = `/api/v1/dashboards/${existing.id}`;
      const res = await request(server, 'PUT', path, fields, { token: org.userToken });
      assert.deepEqual([res.status, res.body], [422, { errors }]);
      const shown = await request(server, 'GET', path, undefined, { token: org.userToken });
      assert.deepEqual(shown.body.data, existing);
    });
  }

  test('one answer names every broken field', async () => {
    const res = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      { name: '', visibility: 'no', payload: { grid: [kpi({ function: 'median', x: 11, w: 2 })] } },
      { token: org.userToken },
    );
    assert.equal(res.status, 422);
    assert.deepEqual(Object.keys(res.body.errors).sort(), [
      'key',
      'name',
      'payload.grid[kpi-1].function',
      'payload.grid[kpi-1].w',
      'source',
      'visibility',
    ]);
  });

  test('a payload as Trifle App saves it (series rows, expressions, its UI fields) is stored and read back unchanged', async () => {
    const row = (kind: string, path: string, expression: string, extra: Record<string, unknown> = {}) => ({
      kind,
      path,
      expression,
      label: '',
      visible: true,
      color_selector: 'default.*',
      ...extra,
    });
    const widgets = [
      {
        id: 'k',
        type: 'kpi',
        title: 'Revenue',
        x: 0,
        y: 0,
        w: 3,
        h: 2,
        function: 'sum',
        subtype: 'goal',
        size: 'l',
        goal_target: '1200',
        goal_progress: true,
        goal_invert: false,
        diff: false,
        timeseries: false,
        series: [row('path', 'revenue', '')],
      },
      {
        id: 't',
        type: 'timeseries',
        title: 'Rate',
        x: 3,
        y: 0,
        w: 9,
        h: 4,
        chart_type: 'dots',
        stacked: false,
        normalized: false,
        legend: true,
        y_label: '',
        series: [
          row('path', 'errors', '', { visible: false }),
          row('path', 'requests', '', { visible: false }),
          row('expression', '', 'a / b * 100', { label: 'Error %' }),
        ],
      },
      {
        id: 'l',
        type: 'list',
        title: 'Channels',
        x: 0,
        y: 4,
        w: 4,
        h: 3,
        limit: null,
        sort: 'alpha',
        series: [row('path', 'channel.*', '')],
      },
      {
        id: 'x',
        type: 'text',
        title: 'Notes',
        x: 4,
        y: 4,
        w: 8,
        h: 1,
        subtype: 'header',
        alignment: 'center',
        subtitle: '',
      },
    ];
    const made = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, { payload: { grid: widgets } }),
    );
    const shown = await request(server, 'GET', `/api/v1/dashboards/${made.id}`, undefined, {
      token: org.userToken,
    });
    assert.deepEqual(shown.body.data.payload, { grid: widgets });
  });

  test('the three ways to name a source, and forms that disagree', async () => {
    const viaSource = await createDashboard(server, org.userToken, dashboardBody(org));
    const viaPair = await createDashboard(
      server,
      org.userToken,
      bodyWith(org, { source: undefined, source_type: 'project', source_id: org.projectId }),
    );
    const viaDatabaseId = await createDashboard(
      server,
      org.userToken,
      bodyWith(org, { source: undefined, database_id: org.databaseId }),
    );
    assert.deepEqual([viaSource.source_type, viaSource.database_id], ['database', org.databaseId]);
    assert.deepEqual(
      [viaPair.source_type, viaPair.source_id, viaPair.database_id],
      ['project', org.projectId, null],
    );
    assert.deepEqual([viaDatabaseId.source_type, viaDatabaseId.source_id], ['database', org.databaseId]);
    const projectAsDatabase = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      bodyWith(org, { source: undefined, database_id: org.projectId }),
      { token: org.userToken },
    );
    assert.deepEqual(projectAsDatabase.body, {
      errors: { database_id: ['must be the id of a database source of this organization'] },
    });
    const disagree = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      bodyWith(org, { source_type: 'project', source_id: org.projectId }),
      { token: org.userToken },
    );
    assert.deepEqual(
      [disagree.status, disagree.body],
      [422, { errors: { source_id: ['must name the same source as source'] } }],
    );
  });

  test('group_id names a group of the organization, or null', async () => {
    const group = await request(
      server,
      'POST',
      '/api/v1/dashboard-groups',
      { name: 'Ops' },
      { token: org.userToken },
    );
    const groupId = group.body.data.id;
    const d = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, { group_id: groupId.toUpperCase() }),
    );
    assert.equal(d.group_id, groupId);
    const cleared = await request(
      server,
      'PUT',
      `/api/v1/dashboards/${d.id}`,
      { group_id: null },
      { token: org.userToken },
    );
    assert.equal(cleared.body.data.group_id, null);
  });
});

describe('dashboards with projects disabled', () => {
  let server: TestServer;
  let org: DashboardOrg;
  const DISABLED = { errors: { source_type: ['projects are disabled for this deployment'] } };

  before(async () => {
    server = await startTestServer({ SERVICE_PROJECTS_ENABLED: 'false' });
    org = await setupOrganization(server, { projects: false });
  });
  after(() => server.stop());

  test('source_type "project" is refused with 422 in every form; database sources work', async () => {
    const someId = '00000000-0000-4000-8000-0000000000aa';
    const forms = [
      bodyWith(org, { source: undefined, source_type: 'project', source_id: someId }),
      bodyWith(org, { source: { type: 'project', id: someId } }),
    ];
    for (const body of forms) {
      const res = await request(server, 'POST', '/api/v1/dashboards', body, { token: org.userToken });
      assert.deepEqual([res.status, res.body], [422, DISABLED]);
    }
    const d = await createDashboard(server, org.userToken, dashboardBody(org));
    assert.equal(d.source_type, 'database');
    const put = await request(
      server,
      'PUT',
      `/api/v1/dashboards/${d.id}`,
      { source_type: 'project', source_id: someId },
      { token: org.userToken },
    );
    assert.deepEqual([put.status, put.body], [422, DISABLED]);
  });
});

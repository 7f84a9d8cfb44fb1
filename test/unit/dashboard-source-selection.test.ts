import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorBag } from '../../src/domain/dashboards/issues';
import { type SourceFields, selectSource } from '../../src/domain/dashboards/source-selection';
import type { Source, SourceType } from '../../src/domain/types';
import { projectSource } from '../helpers/source';

const ORG = '00000000-0000-4000-8000-000000000001';
const OTHER_ORG = '00000000-0000-4000-8000-000000000002';
const DB = '10000000-0000-4000-8000-00000000000a';
const PROJECT = '20000000-0000-4000-8000-00000000000b';
const FOREIGN_DB = '30000000-0000-4000-8000-00000000000c';

function source(id: string, type: SourceType, organizationId = ORG): Source {
  const driver = type === 'database' ? 'sqlite' : null;
  return projectSource({ id, organizationId, type, displayName: id, driver, granularities: ['1h', '1d'] });
}

const all = [source(DB, 'database'), source(PROJECT, 'project'), source(FOREIGN_DB, 'database', OTHER_ORG)];
const lookup = {
  inOrganization: async (id: string, org: string) => all.find((s) => s.id === id && s.organizationId === org),
};

async function select(
  fields: SourceFields,
  options = { projectsEnabled: true, keptProjectId: null as string | null },
) {
  const bag = new ErrorBag();
  const chosen = await selectSource(fields, ORG, lookup, options, bag);
  return { id: chosen ? chosen.id : chosen, errors: bag.fields };
}

describe('source selection', () => {
  test('the three forms name a source', async () => {
    assert.deepEqual(await select({ source: { type: 'database', id: DB } }), { id: DB, errors: {} });
    assert.deepEqual(await select({ source_type: 'project', source_id: PROJECT }), {
      id: PROJECT,
      errors: {},
    });
    assert.deepEqual(await select({ database_id: DB }), { id: DB, errors: {} });
    assert.deepEqual(await select({ source_type: 'database', source_id: DB.toUpperCase() }), {
      id: DB,
      errors: {},
    });
  });

  test('nothing sent (or database_id null) names no source', async () => {
    assert.deepEqual(await select({}), { id: undefined, errors: {} });
    assert.deepEqual(await select({ database_id: null }), { id: undefined, errors: {} });
  });

  test('forms that agree are fine; forms that disagree are refused', async () => {
    assert.deepEqual(await select({ source_type: 'database', source_id: DB, database_id: DB }), {
      id: DB,
      errors: {},
    });
    assert.deepEqual(await select({ source: { type: 'project', id: PROJECT }, database_id: DB }), {
      id: null,
      errors: { database_id: ['must name the same source as source'] },
    });
  });

  test('half of source_type + source_id is refused', async () => {
    assert.deepEqual((await select({ source_type: 'database' })).errors, {
      source_id: ['is required with source_type'],
    });
    assert.deepEqual((await select({ source_id: DB })).errors, {
      source_type: ['is required with source_id'],
    });
  });

  test('the source must be of the organization and of the named type', async () => {
    const message = (type: string) => [`must be the id of a ${type} source of this organization`];
    assert.deepEqual((await select({ source_type: 'database', source_id: FOREIGN_DB })).errors, {
      source_id: message('database'),
    });
    assert.deepEqual((await select({ source_type: 'database', source_id: PROJECT })).errors, {
      source_id: message('database'),
    });
    assert.deepEqual((await select({ database_id: PROJECT })).errors, { database_id: message('database') });
    assert.deepEqual((await select({ source: { type: 'project', id: 'nope' } })).errors, {
      'source.id': message('project'),
    });
  });

  test('projects disabled: a project source is refused, except the one a dashboard already has', async () => {
    const disabled = { projectsEnabled: false, keptProjectId: null };
    assert.deepEqual((await select({ source_type: 'project', source_id: PROJECT }, disabled)).errors, {
      source_type: ['projects are disabled for this deployment'],
    });
    assert.deepEqual((await select({ source: { type: 'project', id: PROJECT } }, disabled)).errors, {
      source_type: ['projects are disabled for this deployment'],
    });
    const kept = await select(
      { source_type: 'project', source_id: PROJECT },
      { projectsEnabled: false, keptProjectId: PROJECT },
    );
    assert.deepEqual(kept, { id: PROJECT, errors: {} });
    assert.deepEqual(await select({ database_id: DB }, disabled), { id: DB, errors: {} });
  });
});

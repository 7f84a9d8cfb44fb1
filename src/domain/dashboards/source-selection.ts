// Which source a dashboard reads (SPEC 6): `source: {type, id}`, or `source_type` + `source_id`, or
// `database_id` (a database source). Several forms may be sent together (a client echoing a
// dashboard back sends source_type, source_id and database_id) but they must name the same source.
// The source must belong to the organization and have the named type; with projects disabled a
// project source can no longer be chosen (a dashboard already on one keeps it).
import type { Source, SourceType } from '../types';
import { normalizeId } from '../../lib/ids';
import type { ErrorBag } from './issues';

export interface SourceFields {
  source?: { type: SourceType; id: string };
  source_type?: SourceType;
  source_id?: string;
  database_id?: string | null;
}

export interface SourceLookup {
  inOrganization(id: string, organizationId: string): Promise<Source | undefined>;
}

interface Choice {
  type: SourceType;
  id: string;
  /** the field errors about the id are reported under */
  idField: string;
  form: string;
}

function collectChoices(fields: SourceFields, bag: ErrorBag): Choice[] {
  const choices: Choice[] = [];
  if (fields.source !== undefined) {
    choices.push({ ...fields.source, idField: 'source.id', form: 'source' });
  }
  const { source_type: type, source_id: id } = fields;
  if (type !== undefined && id !== undefined) {
    choices.push({ type, id, idField: 'source_id', form: 'source_type and source_id' });
  } else if (type !== undefined) {
    bag.add('source_id', 'is required with source_type');
  } else if (id !== undefined && !bag.has('source_type')) {
    bag.add('source_type', 'is required with source_id');
  }
  if (typeof fields.database_id === 'string') {
    choices.push({ type: 'database', id: fields.database_id, idField: 'database_id', form: 'database_id' });
  }
  return choices;
}

const sameSource = (a: Choice, b: Choice) =>
  a.type === b.type && (normalizeId(a.id) ?? a.id) === (normalizeId(b.id) ?? b.id);

/**
 * The source the fields name: undefined when they name none; null when they name one that cannot
 * be used (the reason is in `bag`). `keptProjectId`: the project an updated dashboard already reads,
 * which stays selectable when projects are disabled.
 */
/** The fields that choose a source; an error in any of them stands for "a source was sent". */
export const SOURCE_FIELDS = ['source', 'source_type', 'source_id', 'database_id'] as const;

export async function selectSource(
  fields: SourceFields,
  organizationId: string,
  sources: SourceLookup,
  options: { projectsEnabled: boolean; keptProjectId: string | null },
  bag: ErrorBag,
): Promise<Source | null | undefined> {
  const choices = collectChoices(fields, bag);
  const [choice, ...others] = choices;
  if (!choice) return undefined;
  const conflict = others.find((other) => !sameSource(choice, other));
  if (conflict) {
    bag.add(conflict.idField, `must name the same source as ${choice.form}`);
    return null;
  }
  const id = normalizeId(choice.id);
  if (choice.type === 'project' && !options.projectsEnabled && id !== options.keptProjectId) {
    bag.add('source_type', 'projects are disabled for this deployment');
    return null;
  }
  const source = id ? await sources.inOrganization(id, organizationId) : undefined;
  if (!source || source.type !== choice.type) {
    bag.add(choice.idField, `must be the id of a ${choice.type} source of this organization`);
    return null;
  }
  return source;
}

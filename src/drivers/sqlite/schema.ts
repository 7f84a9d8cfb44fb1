// The exact-schema check of a sqlite source file (SPEC 8): the file is untrusted input, so before any
// statement touches trifle_stats its definition must be the plain Trifle::Stats table of the source's
// identifier mode. Anything that could run code or change what our statements do is refused: a view,
// a virtual table, a trigger, a generated column, CHECK / COLLATE / REFERENCES / ON CONFLICT clauses,
// column types other than text-like ones, partial or expression indexes, extra unique indexes, or a
// missing unique index on the identity columns (the upsert's conflict target).
//
// The table's SQL is read token by token against a whitelist rather than matched as text, so the
// spellings the Ruby, Elixir and Go libraries (and this service) write all pass.
import type { Database } from 'better-sqlite3';
import type { IdentifierMode } from './setup';

export const STATS_TABLE = 'trifle_stats';

const IDENTITY: Record<IdentifierMode, string[]> = {
  full: ['key'],
  partial: ['key', 'at'],
  separated: ['key', 'granularity', 'at'],
};

export function layoutColumnsOf(mode: IdentifierMode): string[] {
  return [...IDENTITY[mode], 'data'];
}

const TEXTISH =
  /^(text|varchar|varchar\(\d+\)|character varying\(\d+\)|char\(\d+\)|nvarchar\(\d+\)|clob|string)$/;
const TYPES: Record<string, RegExp> = {
  key: TEXTISH,
  granularity: TEXTISH,
  at: /^(text|datetime|timestamp|varchar\(\d+\)|varchar)$/,
  data: /^(text|json|clob|varchar|varchar\(\d+\))$/,
};

// Words a plain Trifle table definition may hold (besides its column names and type words).
const ALLOWED_WORDS = new Set([
  'create',
  'table',
  STATS_TABLE,
  'key',
  'at',
  'granularity',
  'data',
  'primary',
  'not',
  'null',
  'default',
  'unique',
  'without',
  'rowid',
  'strict',
  'constraint',
  'asc',
  'desc',
  'text',
  'varchar',
  'character',
  'varying',
  'char',
  'nvarchar',
  'clob',
  'string',
  'json',
  'datetime',
  'timestamp',
]);

interface Token {
  kind: 'word' | 'ident' | 'string' | 'number' | 'punct';
  text: string;
}

/** Tokens of an SQL statement (comments dropped, quoted identifiers unquoted). */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  const re =
    /\s+|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'((?:[^']|'')*)'|"((?:[^"]|"")*)"|`((?:[^`]|``)*)`|\[([^\]]*)\]|([A-Za-z_][A-Za-z0-9_$]*)|(\d+(?:\.\d+)?)|([(),;])|(.)/gy;
  for (let m = re.exec(sql); m !== null && m[0] !== ''; m = re.exec(sql)) {
    if (m[1] !== undefined) out.push({ kind: 'string', text: m[1] });
    else if (m[2] !== undefined || m[3] !== undefined || m[4] !== undefined) {
      out.push({ kind: 'ident', text: (m[2] ?? m[3] ?? m[4])!.toLowerCase() });
    } else if (m[5] !== undefined) out.push({ kind: 'word', text: m[5].toLowerCase() });
    else if (m[6] !== undefined) out.push({ kind: 'number', text: m[6] });
    else if (m[7] !== undefined) out.push({ kind: 'punct', text: m[7] });
    else if (m[8] !== undefined) out.push({ kind: 'punct', text: m[8] });
  }
  return out;
}

/** The first clause of the table's SQL that a plain Trifle table does not have, or null. */
function unexpectedClause(sql: string): string | null {
  const tokens = tokenize(sql);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'punct') {
      if (!['(', ')', ','].includes(t.text)) return t.text.slice(0, 20);
      continue;
    }
    if (t.kind === 'number') continue;
    const prev = tokens[i - 1];
    // DEFAULT takes one literal; CONSTRAINT takes a name.
    if (prev?.kind === 'word' && prev.text === 'constraint' && (t.kind === 'word' || t.kind === 'ident'))
      continue;
    if (t.kind === 'string') {
      if (prev?.text === 'default') continue;
      return `'${t.text.slice(0, 20)}'`;
    }
    if (!ALLOWED_WORDS.has(t.text)) return t.text.slice(0, 40).toUpperCase();
    if (t.text === 'default') {
      const next = tokens[i + 1];
      if (!next || !(next.kind === 'string' || next.kind === 'number' || next.text === 'null'))
        return 'DEFAULT expression';
    }
  }
  return null;
}

interface SchemaRow {
  type: string;
  name: string;
  sql: string | null;
}

/**
 * null when trifle_stats is exactly the layout of `mode`; 'missing' when the file has no such
 * table; otherwise the problem, in words meant for the client.
 */
export function schemaProblem(db: Database, mode: IdentifierMode): string | null {
  const rows = db
    .prepare<[string], SchemaRow>('SELECT type, name, sql FROM sqlite_schema WHERE lower(tbl_name) = ?')
    .all(STATS_TABLE);
  const table = rows.find(
    (r) => r.name.toLowerCase() === STATS_TABLE && (r.type === 'table' || r.type === 'view'),
  );
  if (!table) return 'missing';
  if (table.type === 'view') return `${STATS_TABLE} is a view, not a table`;
  const sql = table.sql ?? '';
  if (/^\s*create\s+virtual\b/i.test(sql)) return `${STATS_TABLE} is a virtual table, not a plain table`;
  const trigger = rows.find((r) => r.type === 'trigger');
  if (trigger)
    return `table ${STATS_TABLE} has a trigger (${trigger.name.slice(0, 60)}); triggers are not allowed`;
  const columns = columnProblem(db, mode);
  if (columns !== null) return columns;
  const clause = unexpectedClause(sql);
  if (clause !== null) return `table ${STATS_TABLE} has a clause the Trifle layout does not have: ${clause}`;
  return indexProblem(db, mode);
}

interface ColumnInfo {
  name: string;
  type: string;
  hidden: number;
}

function columnProblem(db: Database, mode: IdentifierMode): string | null {
  const columns = db
    .prepare<[], ColumnInfo>(`SELECT name, type, hidden FROM pragma_table_xinfo('${STATS_TABLE}')`)
    .all();
  const generated = columns.find((c) => c.hidden !== 0);
  if (generated)
    return `table ${STATS_TABLE} has a generated or hidden column (${generated.name.slice(0, 60)})`;
  const names = columns.map((c) => c.name);
  const expected = layoutColumnsOf(mode);
  if (names.join(',') !== expected.join(',')) {
    return `table ${STATS_TABLE} has columns (${names.join(', ').slice(0, 200)}), not the ${mode} identifier layout (${expected.join(', ')})`;
  }
  for (const c of columns) {
    const type = c.type
      .toLowerCase()
      .replace(/\s+/g, ' ')
      .replace(/ ?\( ?/g, '(')
      .replace(/ ?\)/g, ')');
    if (!TYPES[c.name]!.test(type))
      return `column ${c.name} of ${STATS_TABLE} has type ${c.type.slice(0, 40) || '(none)'}, not a text type`;
  }
  return null;
}

interface IndexInfo {
  name: string;
  unique: number;
  partial: number;
}

interface IndexColumn {
  cid: number;
  name: string | null;
  coll: string;
  key: number;
}

function indexProblem(db: Database, mode: IdentifierMode): string | null {
  const identity = [...IDENTITY[mode]].sort().join(',');
  let hasIdentityIndex = false;
  for (const index of db
    .prepare<[], IndexInfo>(`SELECT name, "unique", partial FROM pragma_index_list('${STATS_TABLE}')`)
    .all()) {
    const cols = db
      .prepare<[string], IndexColumn>('SELECT cid, name, coll, key FROM pragma_index_xinfo(?) WHERE key = 1')
      .all(index.name);
    const label = `index ${index.name.slice(0, 60)} on ${STATS_TABLE}`;
    if (index.partial) return `${label} is a partial index`;
    if (cols.some((c) => c.cid < 0 || c.name === null)) return `${label} indexes an expression`;
    if (cols.some((c) => c.coll.toUpperCase() !== 'BINARY'))
      return `${label} uses a collation other than BINARY`;
    if (!index.unique) continue;
    if (
      cols
        .map((c) => c.name)
        .sort()
        .join(',') !== identity
    ) {
      return `${label} is unique on (${cols.map((c) => c.name).join(', ')}), not on the identity (${IDENTITY[mode].join(', ')})`;
    }
    hasIdentityIndex = true;
  }
  if (!hasIdentityIndex) return `table ${STATS_TABLE} has no unique index on (${IDENTITY[mode].join(', ')})`;
  return null;
}

// JSON shapes of sources and source tokens (SPEC section 4). A source's config (driver fields,
// credentials, file paths) is never presented.
import type { MintedSourceToken } from '../../domain/source-tokens';
import type { SourceList } from '../../domain/sources';
import type { Source } from '../../domain/types';
import type { SourceTokenRow } from '../../storage/sources';
import { formatTimestamp } from '../../shared/time';

function presentProject(s: Source) {
  return {
    id: s.id,
    type: 'project' as const,
    display_name: s.displayName,
    time_zone: s.timeZone,
    beginning_of_week: s.beginningOfWeek,
    granularities: s.granularities,
    default_timeframe: s.defaultTimeframe,
    default_granularity: s.defaultGranularity,
    expire_after: s.expireAfter,
    retention: s.retention ?? {},
  };
}

function presentDatabase(s: Source) {
  return {
    id: s.id,
    type: 'database' as const,
    display_name: s.displayName,
    driver: s.driver,
    time_zone: s.timeZone,
    beginning_of_week: s.beginningOfWeek,
    granularities: s.granularities,
    default_timeframe: s.defaultTimeframe,
    default_granularity: s.defaultGranularity,
    setup_status: s.setupStatus,
  };
}

export const presentSource = (s: Source) => (s.type === 'project' ? presentProject(s) : presentDatabase(s));

export const presentSourceList = (list: SourceList) => ({
  projects: list.projects.map(presentProject),
  databases: list.databases.map(presentDatabase),
});

/** POST /source-tokens: the token (value shown once) and its source. */
export const presentSourceToken = (t: MintedSourceToken) => ({
  token: {
    id: t.row.id,
    name: t.row.name,
    value: t.value,
    read: t.row.can_read === 1,
    write: t.row.can_write === 1,
    source_type: t.source.type,
    source_id: t.source.id,
  },
  source: presentSource(t.source),
});

/** A listed source token: never its value, only the last 5 characters to recognise it by. */
export const presentSourceTokenRow = (row: SourceTokenRow) => ({
  id: row.id,
  name: row.name,
  last5: row.last5,
  read: row.can_read === 1,
  write: row.can_write === 1,
  source_id: row.source_id,
  inserted_at: formatTimestamp(row.created_at),
});

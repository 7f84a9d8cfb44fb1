// The organization's sources (projects and databases) as one list.
import { get } from './api';
import type { Source } from './types';

export async function loadSources(signal?: AbortSignal, silent = false): Promise<Source[]> {
  const data = await get<{ projects: Source[]; databases: Source[] }>('/bootstrap/sources', {
    signal,
    silent,
  });
  return [...data.projects, ...data.databases];
}

export const sourceLabel = (s: Source): string =>
  `${s.display_name} (${s.type === 'project' ? 'project' : (s.driver ?? 'database')})`;

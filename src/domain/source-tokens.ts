// Source tokens (SPEC sections 3, 4 and 7): bound to one source of the organization, with read and
// write permissions. The value is returned once; only its hash and last 5 characters are stored.
import type { Ports } from './ports';
import { invalidField, notFound } from '../errors';
import { newId } from '../lib/ids';
import { mintToken, SOURCE_TOKEN_PREFIX } from '../lib/tokens';
import type { SourceTokenRow } from '../storage/sources';
import type { Source, SourceType, UserAuth } from './types';

export const DEFAULT_SOURCE_TOKEN_NAME = 'CLI source token';

export interface SourceTokenInput {
  sourceType: SourceType;
  /** a canonical (lower-case) UUID */
  sourceId: string;
  name: string;
  read: boolean;
  write: boolean;
}

export interface MintedSourceToken {
  row: SourceTokenRow;
  /** the token string, shown once */
  value: string;
  source: Source;
}

export async function createSourceToken(
  deps: Ports,
  auth: UserAuth,
  input: SourceTokenInput,
): Promise<MintedSourceToken> {
  if (input.sourceType === 'project' && !deps.config.features.projectsEnabled) {
    throw invalidField('source_type', 'projects are disabled for this deployment');
  }
  const org = auth.organizationId;
  const source = org ? await deps.sources.inOrganization(input.sourceId, org) : undefined;
  if (!org || !source || source.type !== input.sourceType) throw notFound();
  const minted = mintToken(SOURCE_TOKEN_PREFIX);
  const row: SourceTokenRow = {
    id: newId(),
    source_id: source.id,
    organization_id: org,
    user_id: auth.userId,
    name: input.name,
    token_hash: minted.hash,
    last5: minted.last5,
    can_read: input.read ? 1 : 0,
    can_write: input.write ? 1 : 0,
    created_at: deps.now(),
  };
  // The source is checked again in the insert itself: 404 when it was removed meanwhile.
  if (!(await deps.sources.insertToken(row, source.type))) throw notFound();
  return { row, value: minted.value, source };
}

/** The organization's source tokens (never their values), optionally of one source. */
export async function listSourceTokens(
  deps: Ports,
  auth: UserAuth,
  sourceId: string | null,
): Promise<SourceTokenRow[]> {
  if (!auth.organizationId) return [];
  const rows = await deps.sources.tokensByOrganization(auth.organizationId);
  return sourceId ? rows.filter((row) => row.source_id === sourceId) : rows;
}

/** Deletes a source token of the organization; another organization's or an unknown id is 404. */
export async function revokeSourceToken(
  deps: Ports,
  auth: UserAuth,
  tokenId: string,
): Promise<SourceTokenRow> {
  const row = await deps.sources.tokenById(tokenId);
  if (!row || row.organization_id !== auth.organizationId) throw notFound();
  await deps.sources.deleteToken(row);
  return row;
}

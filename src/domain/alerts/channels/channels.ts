// Channels as an organization's resource (SPEC 13): create, change, remove, and the shape the API
// shows. Secrets are encrypted with the service's secret box before they are stored and shown
// only masked; a change that leaves a secret out keeps it, `null` or "" removes an optional one.
import * as v from 'valibot';
import { conflict, invalid, notFound } from '../../../errors';
import { newId, normalizeId } from '../../../lib/ids';
import type { SecretBox } from '../../../lib/secrets';
import { formatTimestamp } from '../../../shared/time';
import type { ChannelPreset, ChannelType, ChannelsRepo, StoredChannel } from '../../../storage/channels';
import { LIMITS, PRESET_TYPES, TYPE_SPECS, issuesByField, maskSecret } from './fields';

export const NO_ORGANIZATION =
  'User has no organization: create one with POST /api/v1/bootstrap/organizations';

/** A channel body as the edge read it: every field optional (which are needed depends on the type). */
export interface ChannelInput {
  name?: string;
  type?: ChannelType;
  preset?: ChannelPreset | null;
  settings?: Record<string, unknown>;
  /** secret field -> new value; null or "" removes an optional secret; a field left out is kept */
  secrets?: Record<string, string | null>;
}

export interface ChannelsContext {
  channels: ChannelsRepo;
  secrets: SecretBox;
  now: () => number;
  /** whether `[smtp]` is configured (e-mail channels need it) */
  smtpConfigured: boolean;
}

/** The masked form of a stored secret ("…" when it cannot be read). */
function maskedOf(ctx: Pick<ChannelsContext, 'secrets'>, stored: string): string {
  try {
    return maskSecret(ctx.secrets.decrypt(stored));
  } catch {
    return '…';
  }
}

export function presentChannel(c: StoredChannel, box: SecretBox) {
  const secrets: Record<string, string> = {};
  for (const [name, stored] of Object.entries(c.secrets)) secrets[name] = maskedOf({ secrets: box }, stored);
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    preset: c.preset,
    settings: c.settings,
    secrets,
    organization_id: c.organizationId,
    inserted_at: formatTimestamp(c.insertedAt),
    updated_at: formatTimestamp(c.updatedAt),
  };
}

export type ChannelView = ReturnType<typeof presentChannel>;

export async function listChannels(
  ctx: ChannelsContext,
  organizationId: string | null,
): Promise<StoredChannel[]> {
  return organizationId ? ctx.channels.list(organizationId) : [];
}

/** The organization's channel, or 404 (another organization's is as unknown as a missing one). */
export async function findChannel(
  ctx: ChannelsContext,
  organizationId: string | null,
  rawId: unknown,
): Promise<StoredChannel> {
  const id = normalizeId(rawId);
  const found = id && organizationId ? await ctx.channels.get(organizationId, id) : null;
  if (!found) throw notFound();
  return found;
}

interface Checked {
  name: string;
  type: ChannelType;
  preset: ChannelPreset | null;
  settings: Record<string, unknown>;
  secrets: Record<string, string>;
}

/** The channel a body makes of `current` (null on create), checked whole; 422 naming every field. */
function check(ctx: ChannelsContext, current: StoredChannel | null, input: ChannelInput): Checked {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const name = input.name ?? current?.name;
  if (name === undefined) add('name', 'is required');
  const type = input.type ?? current?.type;
  if (type === undefined) {
    add('type', 'is required (one of webhook, ntfy, gotify, email)');
    throw invalid(errors);
  }
  const sameType = current !== null && current.type === type;
  if (type === 'email' && !ctx.smtpConfigured)
    add('type', 'e-mail channels need the [smtp] section of the service configuration (host and from)');

  let preset: ChannelPreset | null =
    input.preset !== undefined ? input.preset : sameType ? (current?.preset ?? null) : null;
  if (preset !== null && PRESET_TYPES[preset] !== type) {
    add('preset', `is for ${PRESET_TYPES[preset]} channels`);
    preset = null;
  }

  const spec = TYPE_SPECS[type];
  // Settings: a change merges into the current ones (of the same type); secret fields written
  // among the settings are taken as secrets, so a form may send them in either place.
  const givenSettings = { ...(input.settings ?? {}) };
  const givenSecrets: Record<string, string | null> = { ...(input.secrets ?? {}) };
  for (const field of Object.keys(spec.secrets)) {
    if (field in givenSettings) {
      const value = givenSettings[field];
      delete givenSettings[field];
      if (!(field in givenSecrets)) givenSecrets[field] = value === null ? null : (value as string);
    }
  }
  const merged = { ...(sameType ? current!.settings : {}), ...givenSettings };
  const parsed = v.safeParse(spec.settings, merged);
  let settings: Record<string, unknown> = {};
  if (parsed.success) settings = parsed.output;
  else issuesByField('settings', parsed.issues, errors);

  const secrets: Record<string, string> = {};
  for (const [field, rule] of Object.entries(spec.secrets)) {
    let given = givenSecrets[field];
    const kept = sameType ? current!.secrets[field] : undefined;
    // A form that sends back the masked value it was shown ("…abcd") means "unchanged".
    if (
      typeof given === 'string' &&
      given.startsWith('…') &&
      kept !== undefined &&
      given === maskedOf(ctx, kept)
    )
      given = undefined;
    if (given === undefined) {
      if (kept !== undefined) secrets[field] = kept;
      else if (rule.required) add(`secrets.${field}`, 'is required');
      continue;
    }
    if (given === null || given === '') {
      if (rule.required) add(`secrets.${field}`, 'is required');
      continue;
    }
    const result = v.safeParse(rule.schema, given);
    if (!result.success) issuesByField(`secrets.${field}`, result.issues, errors);
    else secrets[field] = ctx.secrets.encrypt(result.output);
  }
  for (const field of Object.keys(givenSecrets)) {
    if (!(field in spec.secrets))
      add(
        `secrets.${field}`,
        `is not a secret of ${type} channels (${Object.keys(spec.secrets).join(', ') || 'none'})`,
      );
  }
  if (Object.keys(errors).length > 0) throw invalid(errors);
  return { name: name!, type, preset, settings, secrets };
}

const AT_CAP = `an organization may have at most ${LIMITS.channelsPerOrganization} channels`;

export async function createChannel(
  ctx: ChannelsContext,
  organizationId: string | null,
  input: ChannelInput,
): Promise<StoredChannel> {
  if (!organizationId) throw conflict(NO_ORGANIZATION);
  const checked = check(ctx, null, input);
  if ((await ctx.channels.count(organizationId)) >= LIMITS.channelsPerOrganization)
    throw invalid({ base: [AT_CAP] });
  const now = ctx.now();
  const channel: StoredChannel = { id: newId(), organizationId, ...checked, insertedAt: now, updatedAt: now };
  // The cap counted again with the insert (one transaction): another create may have come in between.
  if (!(await ctx.channels.insert(channel, LIMITS.channelsPerOrganization)))
    throw invalid({ base: [AT_CAP] });
  return channel;
}

/**
 * The changed channel, or 404 when it was deleted since it was read. The body is checked and
 * merged over the channel as read inside the repository's atomic unit (not `current`, read before
 * it), so a change made meanwhile keeps the fields this one leaves out.
 */
export async function updateChannel(
  ctx: ChannelsContext,
  current: StoredChannel,
  input: ChannelInput,
): Promise<StoredChannel> {
  const channel = await ctx.channels.update(current.organizationId, current.id, (read) => ({
    ...read,
    ...check(ctx, read, input),
    updatedAt: Math.max(ctx.now(), read.updatedAt),
  }));
  if (!channel) throw notFound();
  return channel;
}

/** 404 when it was already deleted (by another request since it was read). */
export async function removeChannel(ctx: ChannelsContext, current: StoredChannel): Promise<void> {
  if (!(await ctx.channels.remove(current.organizationId, current.id))) throw notFound();
}

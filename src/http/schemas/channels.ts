// Request bodies of /channels: the envelope (`channel` or the top level) and the top-level fields'
// types. Every field is optional here: which ones a channel needs depends on its type, and the
// type's own fields (settings, secrets) are checked by the channel rules
// (src/domain/alerts/channels/fields.ts), so one 422 names every field. Unknown fields are dropped.
import * as v from 'valibot';
import { invalid } from '../../errors';
import type { ChannelInput } from '../../domain/alerts/channels/channels';
import { CHANNEL_TYPES, LIMITS } from '../../domain/alerts/channels/fields';
import { PRESETS } from '../../domain/alerts/channels/presets';
import { depthWithin } from '../../domain/dashboards/limits';
import { objectBody } from '../middleware/body';

const chars = (s: string) => [...s].length;

const fields = v.object({
  name: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.check((s: string) => s.trim() !== '', 'must not be blank'),
      v.check((s: string) => chars(s) <= LIMITS.name, `must be at most ${LIMITS.name} characters`),
    ),
  ),
  type: v.optional(v.picklist(CHANNEL_TYPES, `must be one of ${CHANNEL_TYPES.join(', ')}`)),
  preset: v.optional(v.nullable(v.picklist(PRESETS, `must be null or one of ${PRESETS.join(', ')}`))),
  settings: v.optional(
    v.pipe(
      v.record(v.string(), v.unknown(), 'must be an object'),
      v.check((s) => depthWithin(s, LIMITS.bodyTemplateDepth + 2), 'is nested too deeply'),
    ),
  ),
  secrets: v.optional(
    v.record(v.string(), v.nullable(v.string('must be a string or null')), 'must be an object of strings'),
  ),
});

/** A POST or PUT body: `{channel: {...}}` or the fields at the top level. */
export function parseChannelBody(body: unknown): ChannelInput {
  const top = objectBody(body);
  const envelope = top.channel;
  const inner =
    typeof envelope === 'object' && envelope !== null && !Array.isArray(envelope)
      ? (envelope as Record<string, unknown>)
      : top;
  const result = v.safeParse(fields, inner);
  if (result.success) {
    const out: ChannelInput = {};
    for (const [key, value] of Object.entries(result.output))
      if (value !== undefined) Object.assign(out, { [key]: value });
    if (out.name !== undefined) out.name = out.name.trim();
    return out;
  }
  const errors: Record<string, string[]> = {};
  for (const issue of result.issues) {
    const path = (issue.path ?? []).map((p) => String(p.key));
    const field = path.length === 0 ? 'base' : path.length === 1 ? path[0]! : `${path[0]}.${path[1]}`;
    const list = (errors[field] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  throw invalid(errors);
}

// /api/v1/channels: list, show, create, update, remove, and "send test" (SPEC 13, docs/alerts-channels.md).
// Organization-scoped with the dashboards' token rules: either token kind, `read` for GET, `write`
// for every change and for a test send. Order of answers: auth -> 400 (body not an object) -> 404
// -> 422.
import type { Context } from 'koa';
import { rateLimited } from '../../errors';
import type { Deps } from '../../deps';
import {
  type ChannelsContext,
  createChannel,
  findChannel,
  listChannels,
  presentChannel,
  removeChannel,
  updateChannel,
} from '../../domain/alerts/channels/channels';
import { createChannelSender } from '../../domain/alerts/channels/sender';
import { CHANNEL_TYPES } from '../../domain/alerts/channels/fields';
import { PRESETS } from '../../domain/alerts/channels/presets';
import type { OutgoingNotification } from '../../domain/alerts/delivery-port';
import { newId } from '../../lib/ids';
import { formatTimestamp } from '../../shared/time';
import { validate } from '../middleware/validate';
import { parseChannelBody } from '../schemas/channels';
import { authOf } from '../state';

/** A test send gets this long (a name lookup, a TLS handshake and an SMTP dialogue included). */
export const TEST_TIMEOUT_MS = 10_000;
/** Test sends one organization may make a minute (then 429 + Retry-After): not a request cannon. */
export const TEST_SENDS_PER_MINUTE = 30;
const TEST_WINDOW_MS = 60_000;

/** The per-organization window of test sends (one per server, in memory, bounded). */
function testSendTurns() {
  const recent = new Map<string, number[]>();
  return (organizationId: string, now: number): void => {
    const times = (recent.get(organizationId) ?? []).filter((t) => now - t < TEST_WINDOW_MS);
    if (times.length >= TEST_SENDS_PER_MINUTE) {
      recent.set(organizationId, times);
      const retryAfter = Math.max(1, Math.ceil((times[0]! + TEST_WINDOW_MS - now) / 1000));
      throw rateLimited(`at most ${TEST_SENDS_PER_MINUTE} test sends a minute per organization`, retryAfter);
    }
    times.push(now);
    recent.delete(organizationId);
    recent.set(organizationId, times);
    if (recent.size > 10_000) recent.delete(recent.keys().next().value!);
  };
}

export const channelInput = {
  fields: validate({ body: parseChannelBody }),
};

/** The notification "send test" delivers: marked as a test in its kind, title and text. */
export function testNotification(now: number, channelName: string): OutgoingNotification {
  const since = formatTimestamp(now);
  return {
    idempotencyKey: `test-${newId()}`,
    kind: 'test',
    monitor: { id: '', name: 'Test notification' },
    instance: {},
    state: 'test',
    previousState: 'test',
    value: null,
    condition: '',
    since,
    durationMs: 0,
    title: `Test notification for ${channelName}`,
    message: `This is a test notification for the channel "${channelName}". If you read this, the channel works.`,
  };
}

export function channelRoutes(deps: Deps) {
  const ctx: ChannelsContext = {
    channels: deps.channels,
    secrets: deps.secrets,
    now: () => deps.now(),
    smtpConfigured: deps.config.smtp.host !== null && deps.config.smtp.from !== null,
  };
  const sender = createChannelSender(deps);
  const present = (c: Parameters<typeof presentChannel>[0]) => presentChannel(c, deps.secrets);
  const orgOf = (k: Context) => authOf(k).organizationId;
  const takeTestTurn = testSendTurns();

  return {
    async list(k: Context): Promise<void> {
      k.body = {
        data: (await listChannels(ctx, orgOf(k))).map(present),
        // what a form may offer: e-mail only when the service has [smtp]
        meta: { types: CHANNEL_TYPES, presets: PRESETS, email_configured: ctx.smtpConfigured },
      };
    },

    async show(k: Context): Promise<void> {
      k.body = { data: present(await findChannel(ctx, orgOf(k), k.params.id)) };
    },

    async create(k: Context): Promise<void> {
      const input = channelInput.fields.body(k);
      const channel = await createChannel(ctx, orgOf(k), input);
      k.status = 201;
      k.body = { data: present(channel) };
    },

    async update(k: Context): Promise<void> {
      const input = channelInput.fields.body(k);
      const current = await findChannel(ctx, orgOf(k), k.params.id);
      k.body = { data: present(await updateChannel(ctx, current, input)) };
    },

    async remove(k: Context): Promise<void> {
      const current = await findChannel(ctx, orgOf(k), k.params.id);
      await removeChannel(ctx, current);
      k.body = { data: present(current) };
    },

    async test(k: Context): Promise<void> {
      const channel = await findChannel(ctx, orgOf(k), k.params.id);
      takeTestTurn(channel.organizationId, Date.now());
      const result = await sender.send(
        channel.organizationId,
        channel.id,
        testNotification(deps.now(), channel.name),
        AbortSignal.timeout(TEST_TIMEOUT_MS),
      );
      const data: { ok: boolean; status?: number; error?: string } = { ok: result.ok };
      if (result.status !== undefined) data.status = result.status;
      if (result.error !== undefined) data.error = result.error;
      k.body = { data };
    },
  };
}

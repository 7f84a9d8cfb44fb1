// GET /api/v1/bootstrap/sources/:id/listeners: the TCP/UDP intake listeners bound to one source of
// the user's organization (docs/intake.md "Listeners"), read-only, for the source's "Send data"
// section in the interface. Any member may read it (a user API token or the session); another
// organization's source, or an unknown one, is 404. The listeners come from the configuration
// (`[[intake.listeners]]`) as the server runs them, so a port 0 shows the port it was given.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { normalizeId } from '../../lib/ids';
import { runningListenersOf, type RunningListener } from '../../intake/listeners';
import { userAuthOf } from '../state';

export function presentListener({ config, address }: RunningListener) {
  return {
    protocol: config.protocol,
    transport: config.transport,
    listen: config.listen,
    host: address.host,
    port: address.port,
    precision: config.protocol === 'influx' ? config.precision : null,
    flush_interval_ms: config.protocol === 'statsd' ? config.flushIntervalMs : null,
    key_prefix: config.keyPrefix,
  };
}

export function intakeListenerRoutes(deps: Deps) {
  return {
    async list(ctx: Context): Promise<void> {
      const id = normalizeId(ctx.params.id);
      const org = userAuthOf(ctx).organizationId;
      const source = id && org ? await deps.sources.inOrganization(id, org) : undefined;
      if (!source) throw notFound();
      ctx.body = {
        data: runningListenersOf(deps)
          .filter((l) => l.config.source === source.id)
          .map(presentListener),
      };
    },
  };
}

// GET /api/v1/health (SPEC section 1): 200 with the contract's body while the service can take
// writes. When the embedded store's metric writer is not running (it stopped or could not replay
// its write log, and is being started again with back-off) the answer is 503 with
// `"status":"degraded"` and a `writer` object saying why, so that a supervisor does not take a
// process that answers every metrics call with 503 for a healthy one (docs/operations.md).
// In cluster mode (storage.url) the body has `database`: `{"status":"ok","latency_ms":…}` after a
// round trip to PostgreSQL, or 503 with `"status":"degraded"` and `{"status":"unreachable"}`.
import type { Context } from 'koa';
import { formatTimestamp } from '../../shared/time';
import { SERVER_VERSION } from '../../version';
import type { Deps } from '../../deps';

/** Cluster mode: whether the shared database answers (status ok, with the round trip) or not. */
async function databaseStatus(
  database: NonNullable<Deps['ops']['database']>,
): Promise<{ status: 'ok'; latency_ms: number } | { status: 'unreachable' }> {
  try {
    return { status: 'ok', latency_ms: Math.round((await database.ping()) * 10) / 10 };
  } catch {
    return { status: 'unreachable' };
  }
}

export function healthRoutes(deps: Deps) {
  return {
    async show(ctx: Context): Promise<void> {
      const body = {
        status: 'ok',
        timestamp: formatTimestamp(deps.now()),
        api_version: 'v1',
        server_version: SERVER_VERSION,
      };
      const database = deps.ops.database ? await databaseStatus(deps.ops.database) : undefined;
      if (database && database.status !== 'ok') {
        ctx.status = 503;
        ctx.set('Retry-After', '5');
        ctx.body = { ...body, status: 'degraded', database };
        return;
      }
      const writer = deps.metrics.writerStatus();
      if (writer.state === 'running' || writer.state === 'closed' || database) {
        // in cluster mode the embedded store's writer holds no project's points
        ctx.body = database ? { ...body, database } : body;
        return;
      }
      ctx.status = 503;
      ctx.set('Retry-After', '1');
      ctx.body = {
        ...body,
        status: 'degraded',
        writer: {
          state: writer.state,
          ...(writer.error ? { error: writer.error.replace(/\/[^\s'",)]+/g, '<path>') } : {}),
          ...(writer.code ? { code: writer.code } : {}),
        },
      };
    },
  };
}

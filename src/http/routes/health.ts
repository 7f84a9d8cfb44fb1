import type { Context } from 'koa';
import { formatTimestamp } from '../../shared/time';
import { SERVER_VERSION } from '../../version';
import type { Deps } from '../../deps';

export function healthRoutes(deps: Deps) {
  return {
    async show(ctx: Context): Promise<void> {
      ctx.body = {
        status: 'ok',
        timestamp: formatTimestamp(deps.now()),
        api_version: 'v1',
        server_version: SERVER_VERSION,
      };
    },
  };
}

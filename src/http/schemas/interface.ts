// Inputs of the web interface's extensions (docs/interface.md): the source-token list filter and
// the session body. Query parameters that are missing or malformed are a 400 (SPEC section 2).
import * as v from 'valibot';
import { badRequest } from '../../errors';
import { normalizeId } from '../../lib/ids';
import type { LoginInput } from '../../domain/accounts';
import { parseLogin } from './bootstrap';

export const WEB_SESSION_TOKEN_NAME = 'Web session';

const tokenFilter = v.object({
  source_id: v.optional(
    v.pipe(
      v.string(),
      v.transform((x: string) => normalizeId(x)),
      v.string(),
    ),
  ),
});

/** `?source_id=<uuid>` (optional): the tokens of one source only. */
export function parseSourceTokenFilter(query: unknown): string | null {
  const result = v.safeParse(tokenFilter, query);
  if (!result.success) throw badRequest('source_id must be a UUID');
  return result.output.source_id ?? null;
}

/** POST /session credentials: the login body, its token named for the interface unless given. */
export function parseSessionLogin(body: Record<string, unknown>): LoginInput {
  return parseLogin({ token_name: WEB_SESSION_TOKEN_NAME, ...body });
}

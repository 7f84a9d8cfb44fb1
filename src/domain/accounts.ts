// Users and their API tokens: signup, login and the "who am I" context (SPEC sections 3 and 4).
import type { Ports } from './ports';
import { forbidden, invalid, invalidField, rateLimited, unauthorized } from '../errors';
import { newId } from '../lib/ids';
import { mintToken, USER_TOKEN_PREFIX } from '../lib/tokens';
import type { MembershipRow, OrganizationRow, UserRow, UserTokenRow } from '../storage/accounts';
import { newOrganization, slugify, TAKEN } from './organizations';
import { hashPassword, verifyNothing, verifyPassword } from './passwords';

export const DEFAULT_TOKEN_NAME = 'CLI token';

export interface AccountContext {
  user: UserRow;
  organization: OrganizationRow | null;
  membership: MembershipRow | null;
}

export interface Session extends AccountContext {
  /** the token value, shown once */
  token: { value: string; name: string };
}

export interface SignupInput {
  email: string;
  password: string;
  name: string | null;
  organizationName: string | null;
  tokenName: string;
}

export interface LoginInput {
  email: string;
  password: string;
  tokenName: string;
}

/** 403 unless the deployment lets anyone sign up. */
export function assertRegistrationOpen(deps: Pick<Ports, 'config'>): void {
  if (!deps.config.features.registrationEnabled)
    throw forbidden('Registration is disabled for this deployment');
}

/** A new user token (not stored yet) and the value shown once. */
function newUserToken(
  deps: Pick<Ports, 'now'>,
  userId: string,
  name: string,
): { row: UserTokenRow; shown: Session['token'] } {
  const minted = mintToken(USER_TOKEN_PREFIX);
  const row: UserTokenRow = {
    id: newId(),
    user_id: userId,
    name,
    token_hash: minted.hash,
    last5: minted.last5,
    created_at: deps.now(),
  };
  return { row, shown: { value: minted.value, name } };
}

/**
 * Creates the user, its first token and (with organizationName) its organization, all or nothing:
 * one atomic repository call (accounts.createAccount) checks the e-mail and the slug again.
 */
export async function signup(deps: Ports, input: SignupInput): Promise<Session> {
  // Cheap checks first so a taken email or slug costs no hashing; repeated inside the transaction.
  const taken: Record<string, string[]> = {};
  if (await deps.accounts.userByEmail(input.email)) taken.email = [TAKEN];
  if (input.organizationName && (await deps.accounts.slugTaken(slugify(input.organizationName)))) {
    taken.organization_name = [TAKEN];
  }
  if (Object.keys(taken).length > 0) throw invalid(taken);
  const passwordHash = await hashPassword(input.password);
  const user: UserRow = {
    id: newId(),
    email: input.email,
    name: input.name,
    password_hash: passwordHash,
    created_at: deps.now(),
  };
  const org = input.organizationName ? newOrganization(deps, user.id, input.organizationName) : null;
  const token = newUserToken(deps, user.id, input.tokenName);
  const outcome = await deps.accounts.createAccount({
    user,
    organization: org?.organization ?? null,
    membership: org?.membership ?? null,
    token: token.row,
  });
  if (outcome === 'email_taken') throw invalidField('email', TAKEN);
  if (outcome === 'slug_taken') throw invalidField('organization_name', TAKEN);
  return {
    user,
    token: token.shown,
    organization: org?.organization ?? null,
    membership: org?.membership ?? null,
  };
}

/**
 * Verifies the credentials and mints a new token. Unknown email and wrong password are the same 401
 * and cost the same time. The throttle counts the attempt as a failure before the (asynchronous)
 * password check, so parallel guesses cannot slip past it; a success takes the count back.
 */
export async function login(deps: Ports, input: LoginInput, address: string): Promise<Session> {
  const user = await verifyCredentials(deps, input, address);
  const token = newUserToken(deps, user.id, input.tokenName);
  await deps.accounts.insertUserToken(token.row);
  return { ...(await accountContext(deps, user.id)), token: token.shown };
}

/** The login's checks and throttle without minting a token (the web interface's sign-in opens a session). */
export async function verifyCredentials(
  deps: Ports,
  input: Pick<LoginInput, 'email' | 'password'>,
  address: string,
): Promise<UserRow> {
  const wait = await deps.loginThrottle.begin(input.email, address, deps.now());
  if (wait > 0) throw rateLimited('Too many failed login attempts, retry later', wait);
  const user = await deps.accounts.userByEmail(input.email);
  const ok = user
    ? await verifyPassword(user.password_hash, input.password)
    : await verifyNothing(input.password);
  if (!user || !ok) throw unauthorized('Invalid email or password');
  await deps.loginThrottle.succeeded(input.email, address);
  return user;
}

/** The user with its organization and membership (null when it has none). */
export async function accountContext(deps: Pick<Ports, 'accounts'>, userId: string): Promise<AccountContext> {
  const user = await deps.accounts.userById(userId);
  // The token was just resolved to this user; a missing row means it was deleted meanwhile.
  if (!user) throw unauthorized();
  const membership = (await deps.accounts.membershipByUser(userId)) ?? null;
  const organization = membership
    ? ((await deps.accounts.organizationById(membership.organization_id)) ?? null)
    : null;
  return { user, organization, membership };
}

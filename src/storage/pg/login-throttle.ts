// The login throttle on PostgreSQL (cluster mode, SPEC 14): the `login_throttle` table shared by
// every node, so that N nodes allow the guesses of one. Same rules as domain/login-throttle.ts.
import type { PgStore } from './client';
import type { LoginThrottle } from '../../domain/login-throttle';
import { notBuilt } from './not-built';

export function createPgLoginThrottle(_store: PgStore): LoginThrottle {
  return notBuilt<LoginThrottle>('loginThrottle');
}

// Password hashing with argon2id (SPEC section 3). The parameters are OWASP's recommended minimum
// for argon2id (19 MiB, 2 passes, 1 lane); a hash records its own parameters, so raising them later
// keeps old hashes verifiable.
import { hash, verify } from '@node-rs/argon2';

const PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;

// A hash of a random secret with the same parameters. Verifying against it when an email is unknown
// makes a failed login take as long as a wrong password, so timing does not reveal which emails exist.
const DUMMY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$I/UkXy8s1UGk5bGaW3HPJQ$4aB4YKC9EMpMFmlw52YJ/qtjLjl4ySeBHEeW7UEypbI';

/** An argon2id PHC string for the password (argon2id is the package's default algorithm). */
export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMS);
}

/** True when the password matches; a malformed stored hash counts as a mismatch. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** Spends the time of one verification and answers false. */
export async function verifyNothing(password: string): Promise<false> {
  await verifyPassword(DUMMY_HASH, password);
  return false;
}

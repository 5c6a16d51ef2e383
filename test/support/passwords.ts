/**
 * The suite hashes passwords at a test-only cost, about a hundredth of OWASP's (PASSWORD_HASH_COST=test-only-insecure,
 * which the vitest projects set for the processes they spawn too): a suite that creates and logs in a thousand
 * users would otherwise spend minutes in scrypt. test/http/session.test.ts checks production's cost through a
 * server that has it.
 */
import { passwordHasherFor, type PasswordHasher } from '../../src/auth/credentials.js';

export const TEST_PASSWORD_HASHER: PasswordHasher = passwordHasherFor('test-only-insecure');

import { createHash, randomBytes } from 'node:crypto';

/**
 * The single-use secrets the account families hand out (the portal's sign-in links and sessions, the
 * admin API's reveal links) and the driver alerts' confirmation links: only their hashes are stored.
 */

/** The stored form of a secret: its SHA-256. */
export const hashSecret = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/** A new secret for a link or a session: 32 random bytes, base64url. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

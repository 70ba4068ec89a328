import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets. A subscription's secret is shown to its owner once, when it is made (or
 * rotated), in the Standard Webhooks form (`whsec_` + base64 of 24 random bytes). It is stored sealed
 * with AES-256-GCM under WEBHOOK_SECRET_KEY, which lives in the environment and never in PostgreSQL:
 * a database dump alone cannot sign a message. The subscription's id is the seal's associated data,
 * so a sealed secret copied onto another subscription's row does not open.
 */

const PREFIX = 'whsec_';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new secret, as the receiver configures it (`whsec_…`, the form the standardwebhooks libraries take). */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

/** The secret sealed for storage: IV, GCM tag, ciphertext. */
export function sealSecret(key: Buffer, secret: string, subscriptionId: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

/** The secret a seal holds; throws when the key or the subscription is not the one it was sealed with. */
export function openSecret(key: Buffer, sealed: Buffer, subscriptionId: string): string {
  const iv = sealed.subarray(0, IV_BYTES);
  const tag = sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * The demo's WEBHOOK_SECRET_KEY when none is set: 32 random bytes kept (hex, readable by its owner
 * only) in a file of the state folder, made on the first run and read on every later one, so webhook
 * subscriptions made in the demo keep working across its restarts. A deployment sets its own key.
 */
export function demoWebhookKey(file: string): Buffer {
  try {
    const text = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{64}$/.test(text)) return Buffer.from(text, 'hex');
    throw new Error(`${file} does not hold a key (64 hex digits): delete it and start again`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

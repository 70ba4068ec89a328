import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * Where `hrs demo` sends its e-mails when SMTP_URL is not set: a real SMTP server on 127.0.0.1 (the mail
 * worker holds a real SMTP conversation with it), which keeps every message it accepts as an `.eml`
 * file in a folder, to open with any mail program or read as text. Nothing to install.
 */
export interface DemoMailSink {
  /** `smtp://127.0.0.1:PORT`, for SMTP_URL. */
  url: string;
  folder: string;
  /** How many messages it has kept. */
  count(): number;
  close(): Promise<void>;
}

/** A file name of the message: when it came, its order, its subject made safe. */
function fileName(n: number, raw: string): string {
  const subject = /^Subject: (.*)$/im.exec(raw)?.[1] ?? 'message';
  const safe = subject.replace(/=\?[^?]+\?[BQ]\?[^?]*\?=/gi, 'encoded').replace(/[^\w.-]+/g, '-').slice(0, 60).replace(/^-+|-+$/g, '');
  const at = new Date().toISOString().replace(/[:.]/g, '-');
  return `${at}-${String(n).padStart(4, '0')}-${safe || 'message'}.eml`;
}

/**
 * smtp-server, loaded only here: it is a development dependency (the demo's and the tests'), which a
 * production install (`npm ci --omit=dev`) leaves out; there the demo needs SMTP_URL and says so.
 */
async function loadSmtpServer(): Promise<typeof import('smtp-server')> {
  try {
    return await import('smtp-server');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new Error('SMTP_URL is not set, and this install has no demo mail sink (smtp-server is a development dependency, left out by npm ci --omit=dev): set SMTP_URL, or install it with npm ci');
  }
}

export async function startDemoMailSink(folder: string): Promise<DemoMailSink> {
  const { SMTPServer } = await loadSmtpServer();
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  let kept = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 500,
    size: 10 * 1024 * 1024,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        try {
          const raw = Buffer.concat(chunks);
          writeFileSync(join(folder, fileName(++kept, raw.toString('utf8', 0, Math.min(raw.length, 8192)))), raw, { mode: 0o600 });
          callback();
        } catch (err) {
          callback(err as Error);
        }
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    folder,
    count: () => kept,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

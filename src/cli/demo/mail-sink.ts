import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * Where `hrs demo` sends its e-mails when SMTP_URL is not set: a real SMTP server on 127.0.0.1 (the mail
 * worker holds a real SMTP conversation with it), which keeps every message it accepts as an `.eml`
 * file in a folder, to open with any mail program, and beside it a `.txt` of the same name with the
 * decoded plain-text body (links whole, not split by the quoted-printable encoding). Nothing to install.
 */
export interface DemoMailSink {
  /** `smtp://127.0.0.1:PORT`, for SMTP_URL. */
  url: string;
  folder: string;
  /** How many messages it has kept. */
  count(): number;
  close(): Promise<void>;
}

/** A message the sink kept, as the demo is told of it. */
export interface KeptMail {
  /** The recipients of the envelope. */
  to: string[];
  /** The decoded plain-text body ('' when the message has none). */
  text: string;
  /** The `.eml` file's path; the `.txt` is beside it. */
  file: string;
}

/** A file name of the message (without extension): when it came, its order, its subject made safe. */
function fileName(n: number, raw: string): string {
  const subject = /^Subject: (.*)$/im.exec(raw)?.[1] ?? 'message';
  const safe = subject.replace(/=\?[^?]+\?[BQ]\?[^?]*\?=/gi, 'encoded').replace(/[^\w.-]+/g, '-').slice(0, 60).replace(/^-+|-+$/g, '');
  const at = new Date().toISOString().replace(/[:.]/g, '-');
  return `${at}-${String(n).padStart(4, '0')}-${safe || 'message'}`;
}

/**
 * smtp-server and mailparser, loaded only here: they are development dependencies (the demo's and the
 * tests'), which a production install (`npm ci --omit=dev`) leaves out; there the demo needs SMTP_URL
 * and says so.
 */
async function loadPackage<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new Error(`SMTP_URL is not set, and this install has no demo mail sink (${name} is a development dependency, left out by npm ci --omit=dev): set SMTP_URL, or install it with npm ci`);
  }
}

/** Starts the sink; `onKept` hears of every message once both its files are written. */
export async function startDemoMailSink(folder: string, onKept: (mail: KeptMail) => void = () => {}): Promise<DemoMailSink> {
  const { SMTPServer } = await loadPackage('smtp-server', () => import('smtp-server'));
  const { simpleParser } = await loadPackage('mailparser', () => import('mailparser'));
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  let kept = 0;
  const keep = async (raw: Buffer, to: string[]): Promise<void> => {
    const base = join(folder, fileName(++kept, raw.toString('utf8', 0, Math.min(raw.length, 8192))));
    writeFileSync(`${base}.eml`, raw, { mode: 0o600 });
    // The message is kept either way: a body mailparser cannot read leaves an empty .txt.
    const text = await simpleParser(raw).then((parsed) => parsed.text ?? '', () => '');
    writeFileSync(`${base}.txt`, text, { mode: 0o600 });
    onKept({ to, text, file: `${base}.eml` });
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 500,
    size: 10 * 1024 * 1024,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        keep(Buffer.concat(chunks), session.envelope.rcptTo.map((r) => r.address)).then(() => callback(), (err: Error) => callback(err));
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

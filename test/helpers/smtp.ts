import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  mail: ParsedMail;
}

/**
 * A real SMTP server on a free local port keeping every message it accepts, parsed (mailparser); closed
 * when the test ends. `refuse(...codes)` answers the next messages' RCPT with those codes (4xx, 5xx).
 */
export async function smtpSink(t: { teardown(fn: () => unknown): void }) {
  const received: ReceivedMail[] = [];
  const refusals: number[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 500,
    onRcptTo(_address, _session, callback) {
      const code = refusals.shift();
      if (code === undefined) return callback();
      callback(Object.assign(new Error(`${code} refused for the test`), { responseCode: code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        void simpleParser(Buffer.concat(chunks)).then((mail) => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), mail });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, received, refuse: (...codes: number[]) => void refusals.push(...codes) };
}

export interface SlowReceived {
  messageId: string;
  subject: string;
  to: string[];
}


/**
 * An SMTP server that answers each message's DATA after `dataDelayMs` and keeps the messages it
 * answered 250. Once `holdAfter` messages are answered (if given) it holds every further answer (its gate
 * closes) until `release()`; a message whose connection closed meanwhile is never answered 250 and
 * never counted as received (its sender did not learn it was delivered): it is listed in `dropped`.
 */
export async function slowSink(t: { teardown(fn: () => unknown): void }, options: { dataDelayMs: number; holdAfter?: number }) {
  const holdAfter = options.holdAfter ?? Infinity;
  const received: SlowReceived[] = [];
  const dropped: string[] = [];
  const closed = new Set<string>();
  /** Sessions whose message waits at the gate for its answer. */
  const held = new Set<string>();
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;

  const answer = async (raw: Buffer, session: SMTPServerSession, callback: (err?: Error | null) => void) => {
    const mail = await simpleParser(raw);
    await new Promise((resolve) => setTimeout(resolve, options.dataDelayMs));
    while (gate) {
      held.add(session.id);
      await gate;
      held.delete(session.id);
    }
    // From here to the answer nothing waits: with the gate closed no message is answered 250.
    if (closed.has(session.id)) {
      dropped.push(mail.messageId ?? '(none)');
      callback(new Error('connection closed before the answer'));
      return;
    }
    received.push({ messageId: mail.messageId ?? '(none)', subject: mail.subject ?? '', to: session.envelope.rcptTo.map((r) => r.address) });
    if (received.length === holdAfter) gate = new Promise<void>((resolve) => (open = resolve));
    callback();
  };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 500,
    onClose(session) {
      closed.add(session.id);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => void answer(Buffer.concat(chunks), session, callback).catch(callback));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    dropped,
    /** Whether the gate is closed (holdAfter messages were answered). */
    holding: () => gate !== undefined,
    held: () => [...held],
    isClosed: (sessionId: string) => closed.has(sessionId),
    release() {
      gate = undefined;
      open?.();
    },
  };
}


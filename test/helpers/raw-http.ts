import { connect } from 'node:net';

/** What came back on a raw connection: the status (0 when the connection closed with no answer), headers, body. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything received, as it came. */
  raw: string;
}

/**
 * Sends one request exactly as written (methods and bytes fetch refuses to send: TRACE, PROPFIND,
 * raw NUL) with `Connection: close`, and reads until the server closes or `timeoutMs` passes.
 */
export function rawRequest(baseUrl: string, method: string, target: string, headers: Record<string, string> = {}, timeoutMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8')));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${method} ${target}: no end within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parse(Buffer.concat(chunks).toString('utf8')));
    });
  });
}

function parse(raw: string): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: '', raw };
  const [statusLine, ...headerLines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(end + 4), raw };
}

/** What came back for bytes sent as they are: the answer, and whether the wait ran out before the server closed. */
export interface RawExchange extends RawAnswer {
  timedOut: boolean;
}

/**
 * Sends `bytes` exactly as given (malformed requests: bare LF, NUL, HTTP/1.0, odd header names) and
 * reads until the server closes or `timeoutMs` passes; never rejects, so a silent server shows as
 * status 0 with `timedOut`.
 */
export function rawExchange(baseUrl: string, bytes: string | Buffer, timeoutMs = 20_000): Promise<RawExchange> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes));
    const chunks: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ ...parse(Buffer.concat(chunks).toString('latin1')), timedOut });
    });
  });
}

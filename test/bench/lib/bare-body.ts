import type { HttpResponse } from 'uWebSockets.js';

/**
 * For the bare uWS servers of the benchmarks: reads a request's whole JSON body and hands it over
 * with a function telling whether the client has gone meanwhile (then nothing may be written).
 */
export function readJsonBody<T>(res: HttpResponse, handle: (body: T, aborted: () => boolean) => void): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const chunks: Buffer[] = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (last) handle(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T, () => aborted);
  });
}

/**
 * Sends bodies with Node's fetch (undici) from a process of its own, as a client of the platform
 * would, and counts per case the tries that read a whole 413 answer. Run by test/system/http-too-large.test.ts:
 * in the server's own process the client's writes and the server's reads take turns on one event
 * loop, which hides what a separate client sees (its writes racing the server's close).
 *
 * Argument: JSON `{ tries, cases: [{ name, url, method, size, chunked?, headers }] }`; prints JSON
 * `[{ name, received, failures: { [what]: count } }]`.
 */
interface Case {
  name: string;
  url: string;
  method: string;
  size: number;
  chunked?: boolean;
  headers: Record<string, string>;
}

/** A body of `size` bytes sent chunked (no Content-Length), 64 KiB a chunk. */
function chunked(size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      const n = Math.min(65536, size - sent);
      if (n <= 0) return controller.close();
      controller.enqueue(new Uint8Array(n).fill(0x20));
      sent += n;
    },
  });
}

const { tries, cases } = JSON.parse(process.argv[2]!) as { tries: number; cases: Case[] };
const results = [];
for (const c of cases) {
  let received = 0;
  const failures: Record<string, number> = {};
  for (let i = 0; i < tries; i++) {
    let what: string;
    try {
      const body = c.chunked ? chunked(c.size) : Buffer.alloc(c.size, 0x20);
      const res = await fetch(c.url, { method: c.method, body, headers: c.headers, duplex: 'half' } as RequestInit);
      const text = await res.text();
      if (res.status === 413 && text.includes('exceeds the limit')) {
        received++;
        continue;
      }
      what = `status ${res.status}`;
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      what = cause?.code ?? cause?.message ?? (err as Error).message;
    }
    failures[what] = (failures[what] ?? 0) + 1;
  }
  results.push({ name: c.name, received, failures });
}
process.stdout.write(JSON.stringify(results));

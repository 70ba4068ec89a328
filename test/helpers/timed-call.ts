/** How long a request may go unanswered before a test gives up on it (a hang, not a slow answer). */
export const GIVE_UP_MS = 30_000;

/** One request's answer and how long it took; status 0 when it got none (its error in `body`). */
export interface TimedAnswer {
  name: string;
  status: number;
  ms: number;
  retryAfter: string | null;
  type: string | null;
  body: string;
}

/** A request timed from the call, given up after GIVE_UP_MS; never rejects (the outage tests compare answers). */
export async function timedCall(name: string, url: string, init: RequestInit = {}): Promise<TimedAnswer> {
  const started = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(GIVE_UP_MS) });
    const body = await res.text();
    return { name, status: res.status, ms: performance.now() - started, retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type'), body };
  } catch (err) {
    return { name, status: 0, ms: performance.now() - started, retryAfter: null, type: null, body: String(err) };
  }
}

import WebSocket from 'ws';

/** A WebSocket client for tests: every message parsed and queued, awaited in order. */
export class WsClient {
  readonly messages: Record<string, any>[] = [];
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | undefined;
  private closeWaiters: (() => void)[] = [];
  /** How far `next()` has read. */
  private read = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, isBinary) => {
      this.messages.push(isBinary ? { binary: true } : (JSON.parse(String(data)) as Record<string, any>));
      this.wake();
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      for (const w of this.closeWaiters.splice(0)) w();
      this.wake();
    });
    socket.on('error', () => {});
  }

  /** Connects; resolves once open. Rejects with the HTTP status when the upgrade is refused. */
  static connect(url: string, headers: Record<string, string> = {}, options: { autoPong?: boolean } = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers, ...options });
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += String(c)));
        res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body, headers: res.headers })));
      });
      socket.once('error', reject);
      const client = new WsClient(socket);
    });
  }

  /**
   * Connects and waits for the first message of `type`, connecting once more when the socket was
   * dropped (1006) before any message came: this uWebSockets.js build can shut a socket upgraded after
   * an await right after its 101 (src/http/sockets.ts, socketBehavior, keeps the route's own `open` out
   * of that window; a native allocation inside the upgrade itself can still land in it, rarely, seen
   * under a busy test run). For tests whose subject is not the socket's life; test/unit/http-core.test.ts
   * (ws-upgrade-open) is about exactly that and connects without it.
   */
  static async connectGreeted(url: string, headers: Record<string, string>, type: string): Promise<{ client: WsClient; greeting: Record<string, any>; dropped: number }> {
    for (let dropped = 0; ; dropped++) {
      const client = await WsClient.connect(url, headers);
      try {
        return { client, greeting: await client.nextOf(type), dropped };
      } catch (err) {
        const droppedAtOnce = client.closed?.code === 1006 && client.messages.length === 0;
        if (!droppedAtOnce || dropped >= 1) throw err;
      }
    }
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next message not read yet (waits up to `ms`). */
  async next(ms = 5000): Promise<Record<string, any>> {
    const deadline = Date.now() + ms;
    while (this.read >= this.messages.length) {
      if (this.closed) throw new Error(`closed (${this.closed.code} ${this.closed.reason}) while waiting for a message`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages[this.read++]!;
  }

  /** Skips messages until one of `type` arrives. */
  async nextOf(type: string, ms = 5000): Promise<Record<string, any>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const message = await this.next(Math.max(1, deadline - Date.now()));
      if (message.type === type) return message;
    }
  }

  /** Skips messages until one that `wanted` accepts arrives. */
  async until(wanted: (message: Record<string, any>) => boolean, ms = 5000): Promise<Record<string, any>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const message = await this.next(Math.max(1, deadline - Date.now()));
      if (wanted(message)) return message;
    }
  }

  /** Messages received but not read yet. */
  get unread(): Record<string, any>[] {
    return this.messages.slice(this.read);
  }

  /** Resolves with the close code and reason. */
  async closedWith(ms = 5000): Promise<{ code: number; reason: string }> {
    if (this.closed) return this.closed;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not closed within ${ms} ms`)), ms);
      this.closeWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.closed!;
  }

  close(): void {
    this.socket.close();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

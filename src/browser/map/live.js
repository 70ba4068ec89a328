/**
 * The public stream (`/map/v1/stream`): `hello` and `changed` carry the feed's ETag (another than the
 * page's copy: refetch the feed), `station` a station's new values (applied at once), `heartbeat`
 * every 25 s. A stream the server ends (1001: its maximum age, or a restart) is opened again at once;
 * a closed connection is otherwise retried with exponential backoff (1 s doubling to 30 s, with
 * jitter, so a restarted server is not met by every page at once). The page says when the connection
 * is lost, and when nothing has arrived for 60 s (the heartbeats stopped: the data may be stale).
 */
import { currentLocale, durationWords, t } from './i18n.js';

const STALE_AFTER_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;

export class LiveStream {
  /**
   * @param handlers `{ etag(etag): the server's feed ETag (refetch when it differs), station(message), notice(kind, text) }`
   */
  constructor(handlers) {
    this.handlers = handlers;
    this.attempt = 0;
    this.lastMessageAt = Date.now();
    this.dataAsOf = new Date();
    this.lost = false;
    this.socket = null;
    setInterval(() => this.checkStale(), 5_000);
  }

  connect() {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/map/v1/stream`;
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.attempt = 0;
      this.lastMessageAt = Date.now();
      if (this.lost) {
        this.lost = false;
        this.handlers.notice('back', t('connection_back'));
      }
      document.body.dataset.live = 'open';
    });
    socket.addEventListener('message', (event) => this.receive(event.data));
    socket.addEventListener('close', (event) => {
      if (this.socket !== socket) return;
      document.body.dataset.live = 'closed';
      // 1001: the server ended the stream (its maximum age, or a restart): back at once, and nothing
      // said unless that fails too.
      if (event.code === 1001 && this.attempt === 0 && !this.lost) {
        this.attempt = 1;
        this.connect();
        return;
      }
      this.lost = true;
      this.handlers.notice('lost', t('connection_lost', { time: this.dataAsOf.toLocaleTimeString(currentLocale(), { hour: '2-digit', minute: '2-digit' }) }));
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
      this.attempt++;
      setTimeout(() => this.connect(), delay);
    });
  }

  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    this.lastMessageAt = Date.now();
    if (message.type === 'hello' || message.type === 'changed') this.handlers.etag(message.etag);
    else if (message.type === 'station') {
      this.dataAsOf = new Date();
      this.handlers.station(message);
    }
    if (!this.lost) this.checkStale();
  }

  /** The page's copy is current as of now (a fresh feed was read). */
  refreshed() {
    this.dataAsOf = new Date();
  }

  checkStale() {
    if (this.lost) return;
    const silent = Date.now() - this.lastMessageAt;
    if (silent > STALE_AFTER_MS) this.handlers.notice('stale', t('data_stale', { duration: durationWords(silent) }));
    else this.handlers.notice('live', '');
  }
}

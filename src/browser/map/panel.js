/**
 * The station panel (a side panel on a desktop, a bottom sheet on a phone): opened from the address
 * (`#/station/BERLA`), it reads GET /map/v1/stations/{hrs_id} (a driver's view of the station) and
 * shows it; the stream's `station` messages update its status section in place. Beside the detail it
 * reads the station's forecast (GET /map/v1/stations/{hrs_id}/forecast), and again when the open
 * station's status changes, at most once a minute (a change sooner is read when the minute is up).
 * Escape and the Close button close it.
 */
import { t } from './i18n.js';
import { alertSection } from './alert-form.js';
import { certification, directions, el, eventList, forecastView, greenList, priceList, section, statusList, weekList } from './panel-parts.js';

/** The least time between two reads of the open station's forecast (its answer may be kept a minute too). */
export const FORECAST_EVERY_MS = 60_000;

/** A node with an id (a link's target). */
const withId = (node, id) => {
  node.id = id;
  return node;
};

/** Reads of a station's detail a passing failure gets, the first included. */
export const DETAIL_TRIES = 4;

/**
 * A station's detail (GET /map/v1/stations/{hrs_id}): `ready` with it, `missing` (404), or `error`
 * once DETAIL_TRIES reads have failed. A passing failure (429, a 5xx, no answer) is read again after
 * its Retry-After (1 to 10 s) or 1, 2, 4 s, while `wanted()` still holds; a 4xx is final.
 */
async function readDetail(hrsId, wanted) {
  for (let attempt = 1; ; attempt++) {
    let wait;
    try {
      const res = await fetch(`/map/v1/stations/${encodeURIComponent(hrsId)}`);
      if (res.ok) return { kind: 'ready', detail: await res.json() };
      if (res.status === 404) return { kind: 'missing' };
      if (res.status !== 429 && res.status < 500) return { kind: 'error' };
      const after = Number(res.headers.get('retry-after'));
      wait = Number.isFinite(after) && after > 0 ? Math.min(10, Math.max(1, after)) * 1000 : undefined;
    } catch {
      // no answer (the connection failed, or the body was cut): a passing failure
    }
    if (attempt >= DETAIL_TRIES || !wanted()) return { kind: 'error' };
    await new Promise((resolve) => setTimeout(resolve, wait ?? 1000 * 2 ** (attempt - 1)));
    if (!wanted()) return { kind: 'error' };
  }
}

export class StationPanel {
  constructor(onClose) {
    this.root = document.getElementById('panel');
    this.title = document.getElementById('panel-title');
    this.body = document.getElementById('panel-body');
    this.hrsId = null;
    this.detail = null;
    /** The station whose detail is being read (null when none is). */
    this.loading = null;
    this.request = 0;
    /** The station whose forecast is read, what was read (`forecastView`'s state), when, and a re-read waiting for its minute. */
    this.forecastFor = null;
    this.forecast = null;
    this.forecastAt = 0;
    this.forecastRequest = 0;
    this.forecastTimer = null;
    document.getElementById('panel-close').addEventListener('click', onClose);
    this.root.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') onClose();
    });
  }

  get openId() {
    return this.hrsId;
  }

  /**
   * Opens the station (`feature`: its feature from the feed, shown at once while the detail loads).
   * Opening the station already open, or still loading, changes nothing: the page draws again on every
   * stream message, and a read begun anew at each would never finish while messages keep coming.
   */
  async open(hrsId, feature, { focus = false } = {}) {
    const same = this.hrsId === hrsId && (this.detail !== null || this.loading === hrsId);
    this.root.hidden = false;
    document.body.dataset.panel = 'open';
    if (focus) this.root.focus();
    if (same) return;
    const request = ++this.request;
    this.hrsId = hrsId;
    this.detail = null;
    this.loading = hrsId;
    this.title.textContent = feature?.properties.name ?? hrsId;
    this.body.replaceChildren(el('p', 'muted', t('panel_loading')));
    this.root.dataset.state = 'loading';
    if (this.forecastFor !== hrsId) {
      this.stopForecast();
      this.forecastFor = hrsId;
      this.forecast = { kind: 'loading' };
      this.readForecast();
    }
    const outcome = await readDetail(hrsId, () => request === this.request);
    if (request !== this.request) return; // another station was opened meanwhile, or the panel closed
    this.loading = null;
    if (outcome.kind === 'ready') {
      this.detail = outcome.detail;
      this.render();
      return;
    }
    // A link to a station the map does not have (mistyped, or removed) says which.
    this.body.replaceChildren(el('p', 'message', outcome.kind === 'missing' ? t('panel_no_station', { id: hrsId }) : t('panel_error')));
    this.root.dataset.state = 'error';
  }

  /** The open station's detail read again (its static fields changed), shown without a loading step. */
  async refresh() {
    const hrsId = this.hrsId;
    if (!hrsId || !this.detail) return;
    const request = ++this.request;
    try {
      const res = await fetch(`/map/v1/stations/${encodeURIComponent(hrsId)}`);
      if (!res.ok || request !== this.request) return;
      this.detail = await res.json();
      this.render();
    } catch {
      // the detail shown stays; the stream's next message updates its values
    }
  }

  close() {
    this.request++;
    this.stopForecast();
    this.hrsId = null;
    this.detail = null;
    this.loading = null;
    this.root.hidden = true;
    delete document.body.dataset.panel;
  }

  /** A stream message for the open station: its values and open_now replace the detail's (each option keeps its price). */
  update(message) {
    if (!this.detail || message.hrs_id !== this.hrsId) return;
    const properties = this.detail.feature.properties;
    properties.fuelling_options = message.fuelling_options;
    properties.open_now = message.open_now;
    const before = new Map((this.detail.fuelling_options ?? []).map((o) => [o.fuelling_option, o]));
    this.detail.fuelling_options = message.fuelling_options.map((entry) => ({ gross_price: null, green_hydrogen_share: null, ...before.get(entry.fuelling_option), ...entry }));
    const status = this.body.querySelector('.status-list');
    if (status) status.replaceWith(statusList(this.detail.fuelling_options, properties.time_zone ?? undefined, this.detail.events));
    this.forecastSoon();
  }

  /** The open station's status changed: its forecast is read again now, or when a minute has passed since the last read. */
  forecastSoon() {
    if (!this.forecastFor || this.forecastTimer !== null) return;
    const wait = this.forecastAt + FORECAST_EVERY_MS - Date.now();
    if (wait <= 0) {
      this.readForecast(true);
      return;
    }
    // Said on the panel (`data-forecast-waiting`) until the minute is up.
    this.root.dataset.forecastWaiting = 'true';
    this.forecastTimer = setTimeout(() => {
      this.forecastTimer = null;
      delete this.root.dataset.forecastWaiting;
      this.readForecast(true);
    }, wait);
  }

  /**
   * Reads the forecast of the station opened (`fresh`: past any copy the browser keeps, since a status
   * change asked for it; on opening, a copy read within the minute will do). A failed re-read keeps the
   * one shown.
   */
  async readForecast(fresh = false) {
    const hrsId = this.forecastFor;
    if (!hrsId) return;
    const request = ++this.forecastRequest;
    this.forecastAt = Date.now();
    let state;
    try {
      const res = await fetch(`/map/v1/stations/${encodeURIComponent(hrsId)}/forecast`, fresh ? { cache: 'no-cache' } : {});
      if (res.status === 503) state = { kind: 'not_published' };
      else if (!res.ok) state = { kind: 'error' };
      else state = { kind: 'ready', body: await res.json() };
    } catch {
      state = { kind: 'error' };
    }
    if (request !== this.forecastRequest || hrsId !== this.forecastFor) return;
    if (state.kind === 'error' && this.forecast?.kind === 'ready') return;
    this.forecast = state;
    const shown = this.body.querySelector('.forecast');
    if (shown && this.detail) shown.replaceWith(forecastView(state, this.detail.feature.properties.time_zone ?? 'UTC'));
  }

  stopForecast() {
    clearTimeout(this.forecastTimer);
    this.forecastTimer = null;
    delete this.root.dataset.forecastWaiting;
    this.forecastFor = null;
    this.forecast = null;
    this.forecastRequest++;
  }

  /** The whole panel again (a new language, a refreshed feed). */
  render() {
    const d = this.detail;
    if (!d) return;
    const p = d.feature.properties;
    const zone = p.time_zone ?? 'UTC';
    this.title.textContent = p.name;
    const address = [p.street, [p.postcode, p.city].filter(Boolean).join(' '), p.country].filter(Boolean).join(', ');
    const photo = d.photo ? el('img', 'photo') : null;
    if (photo) {
      photo.src = d.photo;
      photo.alt = t('panel_photo', { name: p.name });
      photo.loading = 'lazy';
    }
    const sections = [
      el(
        'dl',
        'facts',
        p.operator ? el('dt', null, t('panel_operator')) : null,
        p.operator ? el('dd', null, p.operator) : null,
        address ? el('dt', null, t('panel_address')) : null,
        address ? el('dd', null, address) : null,
      ),
      p.heavy_duty ? el('p', 'tag', t('panel_heavy_duty')) : null,
      section(t('panel_status'), statusList(d.fuelling_options, zone, d.events)),
      withId(section(t('panel_forecast'), forecastView(this.forecast, zone)), 'panel-forecast'),
      alertSection(d),
      section(t('panel_directions'), directions(p, d.feature.geometry.coordinates)),
      section(t('panel_hours'), weekList(d)),
      withId(section(t('panel_events'), eventList(d.events, zone)), 'panel-events'),
      photo,
      section(t('panel_prices'), priceList(d)),
      section(t('panel_green'), greenList(d)),
      section(t('panel_certification'), certification(d)),
    ];
    this.body.replaceChildren(...sections.filter((node) => node !== null));
    this.root.dataset.state = 'ready';
  }
}

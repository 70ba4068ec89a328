/**
 * The public map's page: reads the settings and the feed, draws the map and the list from the address
 * (./state.js), opens the station panel, and keeps everything live over the stream (./live.js).
 * `body[data-ready]` turns "true" once the first feed is shown (the browser tests wait for it). The
 * page's timeline gets marks `map:feed-loaded` and `map:first-render` (after the first list and the
 * map's data), the phases the benchmark reports beside ./map.js's `map:stations-drawn`.
 */
import { currentLanguage, initialLanguage, setLanguage, t } from './i18n.js';
import { StationList } from './list.js';
import { LiveStream } from './live.js';
import { StationPanel } from './panel.js';
import { currentState, navigate, passes } from './state.js';
import { bestStatus, OPTIONS, STATES, stateClass, stateLetter, stateName } from './status.js';

const FEED = '/map/v1/stations.geojson';

/** hrs_id → the station's feature, as the feed (and the stream since) has it. */
const stations = new Map();
let feedEtag = null;
let stationMap = null;
let fitted = false;

const list = new StationList((hrsId) => navigate({ station: hrsId }));
const panel = new StationPanel(() => closePanel());
let openedByUser = false;

/**
 * The first read of the feed, started at once: beside the language, the settings and the map's module
 * rather than after them (a large feed is then mostly in when they are).
 */
let early = fetch(FEED, { cache: 'no-cache' });
early.catch(() => {}); // a failure is seen (and retried) where it is awaited

/** Reads the feed (revalidated: the browser sends its ETag); replaces the stations. */
async function loadFeed() {
  for (let attempt = 0; ; attempt++) {
    try {
      const pending = early ?? fetch(FEED, { cache: 'no-cache' });
      early = null;
      const res = await pending;
      if (!res.ok) throw new Error(String(res.status));
      const feed = await res.json();
      feedEtag = res.headers.get('ETag');
      stations.clear();
      for (const f of feed.features) stations.set(f.properties.hrs_id, f);
      live?.refreshed();
      notice('live', '');
      return;
    } catch {
      notice('error', t('load_error'));
      stationMap?.noStations();
      await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 2000 * 2 ** attempt)));
    }
  }
}

/** The stations the filters let through, each with `best` (its value for the selected option). */
function visible(state) {
  const out = [];
  for (const f of stations.values()) {
    const best = bestStatus(f.properties, state.option);
    if (passes(f.properties, best, state)) out.push({ f, best });
  }
  return out;
}

/** The legend: each value's marker and name (the letters are the language's). */
function legend() {
  document.getElementById('legend').replaceChildren(
    ...STATES.map((status) => {
      const item = document.createElement('li');
      const badge = document.createElement('span');
      badge.className = `badge ${stateClass(status)}`;
      badge.setAttribute('aria-hidden', 'true');
      badge.textContent = stateLetter(status);
      item.append(badge, ` ${stateName(status)}`);
      return item;
    }),
  );
}

/** Draws the filters, list, map and panel from the address. */
function render() {
  const state = currentState();
  syncControls(state);
  const shown = visible(state);
  const listed = shown.map(({ f, best }) => ({ ...f, properties: { ...f.properties, best } }));
  list.render(listed, state.station);
  if (stationMap) {
    // Only flat properties: the source's tiles keep no arrays.
    const features = shown.map(({ f, best }) => ({
      type: 'Feature',
      geometry: f.geometry,
      properties: { hrs_id: f.properties.hrs_id, name: f.properties.name, city: f.properties.city, best },
    }));
    stationMap.show(features, { fit: !fitted && !state.station });
    fitted = true;
  }
  document.body.dataset.view = state.view;
  if (state.station) {
    const feature = stations.get(state.station);
    panel.open(state.station, feature, { focus: openedByUser });
    stationMap?.select(feature ?? null);
  } else if (panel.openId) {
    panel.close();
    stationMap?.select(null);
  }
  openedByUser = false;
  document.body.dataset.ready = 'true';
}

/** Many stream messages in one frame draw once. */
let scheduled = false;
function scheduleRender() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    render();
  });
}

function closePanel() {
  const id = panel.openId;
  navigate({ station: null });
  // Back to where the station was chosen from, for keyboard users.
  document.querySelector(`#station-list button[data-hrs-id="${CSS.escape(id ?? '')}"]`)?.focus();
}

/** A choice per fuelling option, as the vocabulary lists them; the catalogue gives their words. */
function optionChoices() {
  const select = document.getElementById('option');
  for (const option of OPTIONS) {
    const choice = document.createElement('option');
    choice.value = option;
    choice.dataset.i18n = `option_${option}`;
    select.append(choice);
  }
}
optionChoices();

/** The filter controls show the address's state. */
function syncControls(state) {
  const search = document.getElementById('search');
  if (document.activeElement !== search) search.value = state.q;
  document.getElementById('option').value = state.option;
  document.getElementById('available').checked = state.available;
  document.getElementById('open').checked = state.open;
  document.getElementById('heavy').checked = state.heavy;
  document.getElementById('show-map').setAttribute('aria-pressed', String(state.view === 'map'));
  document.getElementById('show-list').setAttribute('aria-pressed', String(state.view === 'list'));
}

function bindControls() {
  const form = document.getElementById('filters');
  form.addEventListener('submit', (event) => event.preventDefault());
  document.getElementById('search').addEventListener('input', (event) => navigate({ q: event.target.value.trim() }, { replace: true }));
  document.getElementById('option').addEventListener('change', (event) => navigate({ option: event.target.value }));
  for (const id of ['available', 'open', 'heavy']) {
    document.getElementById(id).addEventListener('change', (event) => navigate({ [id]: event.target.checked }));
  }
  document.getElementById('show-map').addEventListener('click', () => {
    navigate({ view: 'map' });
    requestAnimationFrame(() => stationMap?.resize());
  });
  document.getElementById('show-list').addEventListener('click', () => navigate({ view: 'list' }));
  document.getElementById('station-list').addEventListener('click', () => (openedByUser = true), { capture: true });
  document.getElementById('station-list').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') openedByUser = true;
  }, { capture: true });
  document.getElementById('language').addEventListener('change', async (event) => {
    await setLanguage(event.target.value, true);
    legend();
    stationMap?.relabel();
    panel.render();
    render();
  });
  document.getElementById('sort-distance').addEventListener('click', () => askPosition());
}

/** The user's position (from "Sort by distance" or the map's "locate me"): the list shows the nearest stations first. */
function located(position) {
  list.position = position;
  document.getElementById('sort-distance').hidden = true;
  render();
}

/** The browser's position, for the list's order by distance; asked for only once granted or on request. */
function askPosition() {
  if (!navigator.geolocation) return;
  navigator.geolocation.getCurrentPosition(
    (position) => located([position.coords.longitude, position.coords.latitude]),
    () => {
      document.getElementById('sort-distance').hidden = true;
    },
    { maximumAge: 600_000, timeout: 15_000 },
  );
}

/** The banner: the connection lost, the data stale, or a load error; "live" hides it ("back" shows a moment). */
let backShownAt = 0;
function notice(kind, text) {
  const banner = document.getElementById('connection');
  if (kind === 'live' && banner.dataset.kind === 'back' && Date.now() - backShownAt < 4000) return;
  if (kind === 'back') backShownAt = Date.now();
  banner.dataset.kind = kind;
  banner.textContent = text;
  banner.hidden = kind === 'live';
}

let live = null;

async function start() {
  await setLanguage(initialLanguage());
  document.getElementById('language').value = currentLanguage();
  legend();
  bindControls();
  const config = await (await fetch('/map/v1/config')).json();
  try {
    const { StationMap } = await import('./map.js');
    stationMap = new StationMap(
      document.getElementById('map'),
      config,
      (hrsId) => {
        openedByUser = true;
        navigate({ station: hrsId });
      },
      (position) => located(position),
    );
  } catch {
    const error = document.getElementById('map-error');
    error.textContent = t('map_error');
    error.hidden = false;
    document.body.dataset.map = 'none';
  }
  await loadFeed();
  performance.mark('map:feed-loaded');
  live = new LiveStream({
    etag: async (etag) => {
      if (etag === feedEtag) return;
      await loadFeed();
      render();
      panel.refresh();
    },
    station: (message) => {
      const feature = stations.get(message.hrs_id);
      if (!feature) return;
      feature.properties.fuelling_options = message.fuelling_options;
      feature.properties.open_now = message.open_now;
      panel.update(message);
      scheduleRender();
    },
    notice,
  });
  live.connect();
  window.addEventListener('hashchange', render);
  render();
  performance.mark('map:first-render');
  if (navigator.permissions) {
    navigator.permissions.query({ name: 'geolocation' }).then((status) => {
      if (status.state === 'granted') askPosition();
      else document.getElementById('sort-distance').hidden = status.state === 'denied';
    }, () => {});
  }
}

start();

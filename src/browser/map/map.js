/**
 * The map: MapLibre GL JS with the built-in basemap (Natural Earth land, coastline and borders from
 * `/map/v1/basemap.geojson`, and GeoNames' place names from the platform's vector tiles
 * `/map/v1/places/{z}/{x}/{y}` drawn in Noto Sans from the platform's font files: no tile server, no
 * internet) or MAP_STYLE_URL's style, and the stations
 * as a clustered GeoJSON source. MapLibre clusters them and counts each cluster's AVAILABLE stations
 * (`clusterProperties`); the markers themselves are buttons in the page (no glyphs needed for their
 * letters, and each is a control with an accessible name), placed where the source's
 * features and clusters are after every render.
 *
 * Once the map is idle after stations were shown (their source loaded, its tiles rendered, the markers
 * placed), the map's element says how many stations its markers stand for (`data-stations-drawn`: the
 * stations of the clusters plus the single stations), and the first time the page's timeline gets a
 * mark `map:stations-drawn`: what the benchmark (test/bench/map.bench.ts) times a load by.
 */
import { AttributionControl, GeolocateControl, Map as MapLibreMap, Marker, NavigationControl } from './vendor/maplibre-gl.mjs';
import { t } from './i18n.js';
import { stateClass, stateLetter, stateName } from './status.js';
import { builtInStyle, PLACES_SOURCE, placesLayer } from './style.js';

/** Counts the AVAILABLE stations of a cluster (the features carry their `best` value). */
const CLUSTER_PROPERTIES = { available: ['+', ['case', ['==', ['get', 'best'], 'AVAILABLE'], 1, 0]] };

export class StationMap {
  /**
   * @param container the map's element
   * @param settings the page's settings (`/map/v1/config`): `style_url` (MAP_STYLE_URL, or null for the built-in basemap) and `font_faces`
   * @param onSelect called with an hrs_id when a station's marker is chosen
   * @param onLocate called with `[lon, lat]` when "locate me" found the user (the list then sorts nearest first)
   */
  constructor(container, settings, onSelect, onLocate = () => {}) {
    const styleUrl = settings.style_url;
    this.onSelect = onSelect;
    // How close a station is brought: the built-in basemap has countries, coasts and towns, nothing to
    // see past a town's scale; a deployment's street-level style (MAP_STYLE_URL) is worth a closer look.
    this.closeZoom = styleUrl ? 13 : 10;
    this.markers = new Map(); // key → { marker, element }
    this.selected = null;
    this.pending = null; // { feature, panel } to bring into view once the hidden map shows (a phone's list view)
    this.data = { type: 'FeatureCollection', features: [] };
    this.shown = false; // stations shown since the last idle: it tells how many were drawn
    this.map = new MapLibreMap({
      container,
      // The place names come once the stations are drawn (showPlaces): their tiles and glyphs would
      // otherwise share the first second with the stations' clustering and delay the markers.
      style: styleUrl ?? builtInStyle(settings.font_faces, { places: false }),
      center: [10.4, 51.2],
      zoom: 4.6,
      attributionControl: false,
      dragRotate: false,
      pitchWithRotate: false,
    });
    this.map.touchZoomRotate.disableRotation();
    this.map.keyboard.disableRotation();
    this.map.addControl(new NavigationControl({ showCompass: false }), 'top-right');
    // "Locate me": the map goes to the user's position (asked for only on this button) and shows it.
    if (navigator.geolocation) {
      const locate = new GeolocateControl({ positionOptions: { maximumAge: 600_000, timeout: 15_000 }, fitBoundsOptions: { maxZoom: this.closeZoom }, trackUserLocation: false });
      locate.on('geolocate', (position) => onLocate([position.coords.longitude, position.coords.latitude]));
      this.map.addControl(locate, 'top-right');
    }
    this.map.addControl(new AttributionControl({ compact: true }), 'bottom-right');
    this.ready = new Promise((resolve) => this.map.on('load', resolve)).then(() => this.addStations());
    // While the map moves, and once the source's new data is in its tiles (no render may follow that).
    this.map.on('render', () => this.placeMarkers());
    this.map.on('sourcedata', (event) => {
      if (event.sourceId === 'stations' && event.isSourceLoaded) this.placeMarkers();
    });
    this.fontFaces = styleUrl ? null : settings.font_faces; // the place names still to add (null: none or added)
    this.map.on('idle', () => {
      this.placeMarkers();
      if (this.shown && this.map.getSource('stations') && this.map.isSourceLoaded('stations')) this.drawn(container);
      // The names just added: the map is idle again once their tiles are drawn.
      if (this.showPlaces()) return;
      // How many place names the view shows (labels that found room), for the browser tests.
      if (this.map.getLayer('places')) container.dataset.placesDrawn = String(this.map.queryRenderedFeatures({ layers: ['places'] }).length);
      container.dataset.idle = 'true'; // drawn, tiles loaded, markers placed (the browser tests wait for it)
    });
    this.map.on('movestart', () => (container.dataset.idle = 'false'));
    // MapLibre follows its container's size: a map shown again (the phone's "Map") brings the open station into view.
    this.map.on('resize', () => {
      this.markTop();
      if (this.pending && container.clientHeight > 0) this.bringIntoView(this.pending.feature, this.pending.panel);
    });
    this.map.on('dataloading', () => (container.dataset.idle = 'false'));
  }

  addStations() {
    this.sourceData = this.data; // what the source was made with (the stations, when they came first)
    this.map.addSource('stations', { type: 'geojson', data: this.data, cluster: true, clusterRadius: 48, clusterMaxZoom: 10, clusterProperties: CLUSTER_PROPERTIES });
    // Invisible: it makes MapLibre build the source's tiles, from which the markers are placed.
    this.map.addLayer({ id: 'stations', type: 'circle', source: 'stations', paint: { 'circle-radius': 1, 'circle-opacity': 0 } });
  }

  /** The stations to show: features whose properties carry `best` (their value for the selected option). */
  async show(features, { fit = false } = {}) {
    this.data = { type: 'FeatureCollection', features };
    this.shown = true;
    await this.ready;
    // Not again what the source was just made with (the feed came before the map had loaded): the
    // worker would cluster every station a second time before the first markers.
    if (this.sourceData !== this.data) {
      this.sourceData = this.data;
      this.map.getSource('stations').setData(this.data);
    }
    if (fit && features.length > 0) this.fit(features);
  }

  /** Says how many stations the placed markers stand for (see the head comment). */
  /**
   * Adds the built-in style's place names, once: after the first stations were drawn (or when the feed
   * could not be read). Whether they were added now.
   */
  showPlaces() {
    if (!this.fontFaces || !this.placesDue || !this.map.isStyleLoaded()) return false;
    this.map.addSource('places', PLACES_SOURCE);
    this.map.addLayer(placesLayer(this.fontFaces), this.map.getLayer('stations') ? 'stations' : undefined);
    this.fontFaces = null;
    return true;
  }

  /** The feed could not be read: the map shows its place names without stations. */
  noStations() {
    this.placesDue = true;
    if (this.map.loaded()) this.showPlaces();
  }

  drawn(container) {
    this.shown = false;
    this.placesDue = true;
    let stations = 0;
    for (const { element } of this.markers.values()) stations += element.dataset.count ? Number(element.dataset.count) : 1;
    container.dataset.stationsDrawn = String(stations);
    // Once: the first stations drawn are the load's measure, and a long session must not pile up marks.
    if (performance.getEntriesByName('map:stations-drawn').length === 0) performance.mark('map:stations-drawn', { detail: { stations } });
  }

  fit(features) {
    let [w, s, e, n] = [180, 90, -180, -90];
    for (const f of features) {
      const [lon, lat] = f.geometry.coordinates;
      [w, s, e, n] = [Math.min(w, lon), Math.min(s, lat), Math.max(e, lon), Math.max(n, lat)];
    }
    this.map.fitBounds([[w, s], [e, n]], { padding: { top: 60, right: 60, bottom: 90, left: 60 }, maxZoom: this.closeZoom, duration: 0 });
  }

  /**
   * Marks the open station's marker and, when another station is opened (or the panel closed), brings it
   * into view. The page renders again on every live message and filter change: the same station left
   * open leaves the view where the user put it (zoomed out to see the stations around it).
   */
  select(feature) {
    const id = feature?.properties.hrs_id ?? null;
    const changed = id !== this.selected;
    this.selected = id;
    for (const { element } of this.markers.values()) element.classList.toggle('selected', element.dataset.hrsId === this.selected);
    if (changed) this.bringIntoView(feature);
  }

  /**
   * The station beside the panel, not under it: the map's padding leaves out what the panel covers (the
   * phone's bottom sheet, the desktop's side panel), so the station is centred in the part in sight and
   * the zoom buttons zoom around it; with no station, the padding goes. A hidden map (no size) waits
   * until it shows, then centres the last station chosen (with no padding if its panel was closed
   * meanwhile: the phone's list, a station opened and closed, then "Map").
   */
  bringIntoView(feature, panel = feature !== null) {
    const container = this.map.getContainer();
    if (container.clientHeight === 0) {
      this.pending = feature ? { feature, panel } : { feature: this.pending?.feature ?? null, panel: false };
      return;
    }
    this.pending = null;
    this.markTop();
    const none = { top: 0, right: 0, bottom: 0, left: 0 };
    this.ready.then(() => {
      if (!feature) return this.map.easeTo({ padding: none, duration: 300 });
      const narrow = matchMedia('(max-width: 899px)').matches;
      let padding = none;
      if (panel && narrow) padding = { ...none, bottom: this.sheetCover() };
      else if (panel) padding = { ...none, right: Math.min(400, Math.round(container.clientWidth / 2)) };
      this.map.easeTo({ center: feature.geometry.coordinates, zoom: Math.max(this.map.getZoom(), this.closeZoom), padding, duration: 400 });
    });
  }

  /** Tells the phone's bottom sheet where the map starts (its height leaves the map a strip above it). */
  markTop() {
    const top = Math.round(this.map.getContainer().getBoundingClientRect().top);
    document.documentElement.style.setProperty('--map-top', `${top}px`);
  }

  /**
   * How much of the map the phone's bottom sheet covers: from the sheet's top (at its full height, which
   * map.css bounds) to the map's bottom, at most three quarters of the map.
   */
  sheetCover() {
    const container = this.map.getContainer();
    const sheet = document.getElementById('panel');
    const full = sheet ? parseFloat(getComputedStyle(sheet).maxHeight) : NaN;
    const sheetTop = innerHeight - (Number.isFinite(full) ? full : innerHeight * 0.5);
    const cover = container.getBoundingClientRect().bottom - sheetTop;
    return Math.round(Math.max(0, Math.min(cover, container.clientHeight * 0.75)));
  }

  resize() {
    this.map.resize();
  }

  /** Relabels the markers in the current language. */
  relabel() {
    for (const [key, entry] of this.markers) {
      this.markers.delete(key);
      entry.marker.remove();
    }
    this.placeMarkers();
  }

  /** One marker per cluster and per station the source shows now; the others removed. */
  placeMarkers() {
    if (!this.map.getSource('stations') || !this.map.isSourceLoaded('stations')) return;
    const seen = new Set();
    for (const feature of this.map.querySourceFeatures('stations')) {
      const p = feature.properties;
      const key = p.cluster ? `cluster:${p.cluster_id}` : `station:${p.hrs_id}`;
      if (seen.has(key)) continue; // a feature lies in more than one tile
      seen.add(key);
      let entry = this.markers.get(key);
      if (!entry) {
        // MapLibre owns the marker's element (its classes, its transform); the button inside is ours.
        const holder = document.createElement('div');
        const element = document.createElement('button');
        element.type = 'button';
        holder.append(element);
        const marker = new Marker({ element: holder }).setLngLat(feature.geometry.coordinates).addTo(this.map);
        entry = { marker, element };
        this.markers.set(key, entry);
        element.addEventListener('click', (event) => {
          event.stopPropagation();
          if (element.dataset.clusterId) this.expand(Number(element.dataset.clusterId), marker.getLngLat());
          else this.onSelect(element.dataset.hrsId);
        });
      }
      if (p.cluster) this.drawCluster(entry.element, p);
      else this.drawStation(entry.element, p);
      entry.marker.setLngLat(feature.geometry.coordinates);
    }
    for (const [key, entry] of this.markers) {
      if (seen.has(key)) continue;
      entry.marker.remove();
      this.markers.delete(key);
    }
  }

  drawStation(element, p) {
    // A station whose registry gives no city is named alone ("Hamburg Port: Closed", not "Hamburg Port, : Closed").
    const label = p.city ? t('marker_label', { name: p.name, city: p.city, status: stateName(p.best) }) : t('marker_label_no_city', { name: p.name, status: stateName(p.best) });
    const className = `marker ${stateClass(p.best)}${p.hrs_id === this.selected ? ' selected' : ''}`;
    if (element.className !== className) element.className = className;
    if (element.getAttribute('aria-label') !== label) element.setAttribute('aria-label', label);
    if (element.textContent !== stateLetter(p.best)) element.textContent = stateLetter(p.best);
    element.dataset.hrsId = p.hrs_id;
    element.dataset.status = p.best;
  }

  /** A cluster's name starts with what it shows ("3/10 stations available"), so speech input finds it by its text (WCAG 2.5.3). */
  drawCluster(element, p) {
    const label = t('cluster_label', { count: p.point_count, available: p.available });
    if (element.getAttribute('aria-label') === label && element.dataset.clusterId === String(p.cluster_id)) return;
    element.className = `cluster${p.available > 0 ? ' has-available' : ''}`;
    element.setAttribute('aria-label', label);
    element.dataset.clusterId = String(p.cluster_id);
    element.dataset.available = String(p.available);
    element.dataset.count = String(p.point_count);
    const available = document.createElement('span');
    available.className = 'cluster-available';
    available.textContent = String(p.available);
    const total = document.createElement('span');
    total.className = 'cluster-total';
    total.textContent = `/${p.point_count}`;
    element.replaceChildren(available, total);
  }

  async expand(clusterId, center) {
    const zoom = await this.map.getSource('stations').getClusterExpansionZoom(clusterId);
    this.map.easeTo({ center, zoom: zoom + 0.5 });
  }
}

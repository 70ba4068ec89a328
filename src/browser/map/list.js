/**
 * The list of the stations the filters let through: the map's accessible alternative. Each station is a
 * button (its value's letter and colour, its name, city, value in words, and the distance when the
 * browser gave a position); the arrow keys move between them. Sorted by distance when a position is
 * known, else by name.
 *
 * The list grows as it is read: the first CHUNK stations are rendered, and the next ones each time its
 * end comes near (scrolled to, or reached with the arrow keys; End renders the rest). Ten thousand
 * items at once took the browser over a second to style and lay out, on every redraw, while the map
 * waited for the same thread. The count above it is always the whole number.
 */
import { currentLocale, t, tCount } from './i18n.js';
import { stateClass, stateLetter, stateName } from './status.js';

/** Great-circle distance in km (haversine). */
export function distanceKm([lon1, lat1], [lon2, lat2]) {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 12_742 * Math.asin(Math.sqrt(a));
}

/** Stations rendered at first and added each time the end of the list comes near. */
export const CHUNK = 200;

export class StationList {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.list = document.getElementById('station-list');
    this.count = document.getElementById('list-count');
    this.order = document.getElementById('list-order');
    this.empty = document.getElementById('list-empty');
    this.position = null; // [lon, lat] when the browser gave one
    this.rows = []; // every station the filters let through, in the list's order
    this.selected = null;
    this.limit = CHUNK; // how many of them are rendered
    // Just after the list: when it comes within reach of the visible part, the next stations are rendered.
    this.more = document.createElement('div');
    this.more.className = 'list-more';
    this.more.setAttribute('aria-hidden', 'true');
    this.list.after(this.more);
    const pane = this.list.closest('.list-pane');
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.grow(CHUNK);
    }, { root: pane, rootMargin: '0px 0px 800px 0px' });
    this.observer.observe(this.more);
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-hrs-id]');
      if (button) this.onSelect(button.dataset.hrsId);
    });
    this.list.addEventListener('keydown', (event) => this.arrows(event));
  }

  /** Renders `features` (each with `best` in its properties); `selected`: the open station's hrs_id. */
  render(features, selected) {
    const collator = new Intl.Collator(currentLocale());
    const rows = features.map((f) => ({ f, km: this.position ? distanceKm(this.position, f.geometry.coordinates) : null }));
    rows.sort((a, b) => (a.km !== null && b.km !== null ? a.km - b.km : 0) || collator.compare(a.f.properties.name, b.f.properties.name));
    const focusedId = document.activeElement?.closest?.('#station-list') ? document.activeElement.dataset.hrsId : null;
    this.rows = rows;
    this.selected = selected;
    // The open and the focused station stay rendered (the focus returns to them).
    for (const id of [selected, focusedId]) {
      const at = id ? rows.findIndex((row) => row.f.properties.hrs_id === id) : -1;
      this.limit = Math.max(this.limit, at + 1);
    }
    this.list.replaceChildren(...rows.slice(0, this.limit).map(({ f, km }) => this.item(f.properties, km, selected)));
    this.watchEnd();
    if (focusedId) this.list.querySelector(`button[data-hrs-id="${CSS.escape(focusedId)}"]`)?.focus();
    this.count.textContent = tCount('list_count', features.length);
    this.order.textContent = this.position ? t('list_by_distance') : t('list_by_name');
    this.empty.hidden = features.length > 0;
  }

  /** Renders up to `count` more stations; the number rendered now. */
  grow(count) {
    const from = this.list.childElementCount;
    if (from >= this.rows.length) return from;
    this.limit = Math.min(this.rows.length, from + count);
    this.list.append(...this.rows.slice(from, this.limit).map(({ f, km }) => this.item(f.properties, km, this.selected)));
    this.watchEnd();
    return this.limit;
  }

  /**
   * Observed anew after each change: the observer speaks only when the end crosses into reach, and an
   * end still within reach after growing (a tall screen) must grow the list again.
   */
  watchEnd() {
    this.more.hidden = this.limit >= this.rows.length;
    this.observer.unobserve(this.more);
    this.observer.observe(this.more);
  }

  item(p, km, selected) {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'station-item';
    button.dataset.hrsId = p.hrs_id;
    if (p.hrs_id === selected) button.setAttribute('aria-current', 'true');
    const badge = document.createElement('span');
    badge.className = `badge ${stateClass(p.best)}`;
    badge.setAttribute('aria-hidden', 'true');
    badge.textContent = stateLetter(p.best);
    const name = document.createElement('span');
    name.className = 'item-name';
    name.textContent = p.name;
    const meta = document.createElement('span');
    meta.className = 'item-meta';
    const distance = km === null ? null : t('distance_km', { km: km.toLocaleString(currentLocale(), { maximumFractionDigits: km < 10 ? 1 : 0 }) });
    meta.textContent = [p.city, stateName(p.best), distance].filter(Boolean).join(' · ');
    button.append(badge, name, meta);
    li.append(button);
    return li;
  }

  /** ArrowUp/ArrowDown (and Home/End) move the focus through the list's buttons. */
  arrows(event) {
    let buttons = [...this.list.querySelectorAll('button')];
    const index = buttons.indexOf(document.activeElement);
    if (index < 0) return;
    if ((event.key === 'ArrowDown' && index === buttons.length - 1) || event.key === 'End') {
      this.grow(event.key === 'End' ? Infinity : CHUNK);
      buttons = [...this.list.querySelectorAll('button')];
    }
    const next = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: buttons.length - 1 }[event.key];
    if (next === undefined || !buttons[next]) return;
    event.preventDefault();
    buttons[next].focus();
  }
}

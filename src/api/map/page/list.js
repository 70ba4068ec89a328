/**
 * The list of the stations the filters let through: the map's accessible alternative. Each station is a
 * button (its value's letter and colour, its name, city, value in words, and the distance when the
 * browser gave a position); the arrow keys move between them. Sorted by distance when a position is
 * known, else by name.
 */
import { currentLocale, t, tCount } from './i18n.js';
import { stateClass, stateLetter, stateName } from './status.js';

/** Great-circle distance in km (haversine). */
export function distanceKm([lon1, lat1], [lon2, lat2]) {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 12_742 * Math.asin(Math.sqrt(a));
}

export class StationList {
  constructor(onSelect) {
    this.onSelect = onSelect;
    this.list = document.getElementById('station-list');
    this.count = document.getElementById('list-count');
    this.order = document.getElementById('list-order');
    this.empty = document.getElementById('list-empty');
    this.position = null; // [lon, lat] when the browser gave one
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
    this.list.replaceChildren(...rows.map(({ f, km }) => this.item(f.properties, km, selected)));
    if (focusedId) this.list.querySelector(`button[data-hrs-id="${CSS.escape(focusedId)}"]`)?.focus();
    this.count.textContent = tCount('list_count', features.length);
    this.order.textContent = this.position ? t('list_by_distance') : t('list_by_name');
    this.empty.hidden = features.length > 0;
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
    const buttons = [...this.list.querySelectorAll('button')];
    const index = buttons.indexOf(document.activeElement);
    if (index < 0) return;
    const next = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: buttons.length - 1 }[event.key];
    if (next === undefined || !buttons[next]) return;
    event.preventDefault();
    buttons[next].focus();
  }
}

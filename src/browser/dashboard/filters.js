// The stations' order and filters: problems first (unavailable, then unknown or stale, then limited,
// then available, then closed; then by name), the count chips as toggles (several may be pressed: the stations in
// any of their states show; none pressed shows all), kept in the address (`#state=unavailable,unknown`)
// so a reload or a shared link keeps them, and the text filter. The sandbox's stations have a table of
// their own (dashboard.js puts them there) and are not counted by the chips. Sets no text but counts.
import { rows } from './rows.js';
import { STATION_STATE_WORDS } from './vocabulary.js';

/** The states a chip may press, worst first. */
var STATES = Object.keys(STATION_STATE_WORDS);
/** Where a station goes: the lower, the higher up. Stale readings rank with unknown ones. */
var RANK = { unavailable: 0, unknown: 1, stale: 1, limited: 2, available: 3, closed: 4 };
var chips = Array.prototype.slice.call(document.querySelectorAll('#state-chips button[data-state]'));
var all = document.getElementById('chip-all');
var text = document.getElementById('filter');
var bodies = { main: document.getElementById('stations'), sandbox: document.getElementById('sandbox-stations') };
/** The states pressed (none: every station shows). */
var pressed = [];

function rank(entry) {
  var state = entry.row.dataset.state || 'unknown';
  return state !== 'unavailable' && entry.row.dataset.stale === 'true' ? RANK.stale : RANK[state];
}

function before(a, b) {
  var byRank = rank(a) - rank(b);
  if (byRank !== 0) return byRank < 0;
  var byName = a.name.localeCompare(b.name);
  if (byName !== 0) return byName < 0;
  return a.row.dataset.hrsId < b.row.dataset.hrsId;
}

function shows(entry) {
  var q = text.value.trim().toLowerCase();
  if (q !== '' && entry.row.dataset.hrsId.toLowerCase().indexOf(q) < 0 && entry.name.toLowerCase().indexOf(q) < 0) return false;
  return pressed.length === 0 || pressed.indexOf(entry.row.dataset.state) >= 0;
}

/** Puts a station's row where it belongs by its state and name (after a change of either), shown or not. */
export function place(entry) {
  var body = entry.sandbox ? bodies.sandbox : bodies.main;
  var row = entry.row;
  var next = null;
  for (var node = body.firstElementChild; node; node = node.nextElementSibling) {
    if (node === row) continue;
    var other = rows.get(node.dataset.hrsId);
    if (other && before(entry, other)) {
      next = node;
      break;
    }
  }
  if (row.parentNode !== body || row.nextElementSibling !== next) body.insertBefore(row, next);
  row.hidden = !shows(entry);
}

function apply() {
  rows.forEach(function (entry) {
    entry.row.hidden = !shows(entry);
  });
  chips.forEach(function (chip) {
    chip.setAttribute('aria-pressed', String(pressed.indexOf(chip.dataset.state) >= 0));
  });
  all.setAttribute('aria-pressed', String(pressed.length === 0));
}

function fromHash() {
  var m = /^#state=([a-z,]*)$/.exec(location.hash);
  pressed = m ? m[1].split(',').filter(function (s) { return STATES.indexOf(s) >= 0; }) : [];
  apply();
}

function toHash() {
  var hash = pressed.length === 0 ? '' : '#state=' + STATES.filter(function (s) { return pressed.indexOf(s) >= 0; }).join(',');
  if (hash === location.hash || (hash === '' && location.hash === '')) return;
  // Replaced, not pushed: Back leaves the page rather than stepping through the filters.
  history.replaceState(null, '', hash === '' ? location.pathname + location.search : hash);
}

chips.forEach(function (chip) {
  chip.addEventListener('click', function () {
    var at = pressed.indexOf(chip.dataset.state);
    if (at >= 0) pressed.splice(at, 1);
    else pressed.push(chip.dataset.state);
    toHash();
    apply();
  });
});
all.addEventListener('click', function () {
  pressed = [];
  toHash();
  apply();
});
text.addEventListener('input', apply);
window.addEventListener('hashchange', fromHash);
fromHash();

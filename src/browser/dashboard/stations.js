// The dashboard's stations table, from the live feed's messages (dashboard.js hands them over to
// this module's exports): a row per station with its state as data users see it and a cell per
// category (cells.js), highlighted when it changes; the counts by state, the sandbox's apart. Where a
// row goes and whether it shows is filters.js's. Every text is set with textContent.

import { age, el, renderCell } from './cells.js';
import { place } from './filters.js';
import { rows } from './rows.js';
import { CATEGORIES, STATION_STATE_KEYS, STATION_STATE_WORDS } from './vocabulary.js';

var HIGHLIGHT_MS = 2000;
/** The categories by the key the feed carries them under. */
var SECTION_KEYS = CATEGORIES.map(function (category) {
  return category.key;
});
// A column per category in both tables, headed by its label, in the vocabulary's order (the cells').
Array.prototype.forEach.call(document.querySelectorAll('table.stations thead tr'), function (row) {
  CATEGORIES.forEach(function (category) {
    var th = el('th', '', category.label);
    th.scope = 'col';
    row.appendChild(th);
  });
});
var $ = function (id) {
  return document.getElementById(id);
};
var els = {
  body: document.body,
  stations: $('stations'),
  sandboxStations: $('sandbox-stations'),
  sandbox: $('sandbox'),
  noStations: $('no-stations'),
  counts: {
    stations: $('count-stations'),
    available: $('count-available'),
    limited: $('count-limited'),
    unavailable: $('count-unavailable'),
    unknown: $('count-unknown'),
    closed: $('count-closed'),
    sandbox: $('count-sandbox'),
  },
};

// --- the table --------------------------------------------------------------------------------

function clearTable() {
  rows.forEach(function (entry) {
    entry.cells && Object.keys(entry.cells).forEach(function (c) {
      clearTimeout(entry.cells[c].highlightTimer);
    });
  });
  rows.clear();
  els.stations.textContent = '';
  els.sandboxStations.textContent = '';
  updateSummary();
}

function rebuild(stations) {
  clearTable();
  stations.forEach(function (station) {
    upsertRow(station);
  });
  updateSummary();
}

function upsertRow(station) {
  if (!station || typeof station.hrs_id !== 'string') return;
  var id = station.hrs_id;
  var tr = el('tr');
  tr.dataset.hrsId = id;
  var head = el('th', 'station');
  head.scope = 'row';
  head.appendChild(el('span', 'station-id', id));
  head.appendChild(el('span', 'station-name', station.name || ''));
  head.appendChild(el('span', 'station-state'));
  tr.appendChild(head);
  var entry = { row: tr, cells: {}, name: station.name || '', sandbox: station.sandbox === true, verdict: station.verdict || null };
  var sections = station.sections || {};
  SECTION_KEYS.forEach(function (category) {
    var td = el('td', 'cell');
    td.dataset.category = category;
    td.updates = 0;
    entry.cells[category] = td;
    renderCell(td, category, sections[category] || null);
    tr.appendChild(td);
  });
  var previous = rows.get(id);
  if (previous) {
    SECTION_KEYS.forEach(function (category) {
      clearTimeout(previous.cells[category].highlightTimer);
    });
    previous.row.remove();
  }
  rows.set(id, entry);
  showState(entry);
  place(entry);
}

/**
 * The station's state from its verdict, as the server computed it for every face (the export APIs,
 * the map, webhooks): the best of its fuelling options', CLOSED outside its opening hours.
 */
function stationState(entry) {
  return (entry.verdict && STATION_STATE_KEYS[entry.verdict.status]) || 'unknown';
}

/**
 * The state on the row and its pill, and the verdict per fuelling option in the availability cell; a
 * stale availability reading is said (it ranks with unknown ones).
 */
function showState(entry) {
  var state = stationState(entry);
  var stale = state !== 'unknown' && state !== 'closed' && entry.verdict && entry.verdict.freshness === 'stale';
  entry.row.dataset.state = state;
  entry.row.dataset.stale = String(Boolean(stale));
  var node = entry.row.querySelector('.station-state');
  node.className = 'station-state state-pill state-' + state;
  node.textContent = STATION_STATE_WORDS[state] + (stale ? ' · stale' : '');
  showVerdict(entry.cells.availability, entry.verdict);
}

/** The verdict in the availability cell: `closed` outside the opening hours, then each option's state. */
function showVerdict(td, verdict) {
  var old = td.querySelector('.cell-verdict');
  if (old) old.remove();
  if (!verdict) return;
  var box = el('div', 'cell-verdict');
  if (verdict.status === 'CLOSED') {
    var closed = el('span', 'badge badge-closed', 'closed');
    closed.dataset.flag = 'closed';
    closed.title = 'outside its opening hours';
    box.appendChild(closed);
  }
  var options = (verdict.fuelling_options || []).map(function (entry) {
    return entry.fuelling_option + ' ' + STATION_STATE_WORDS[STATION_STATE_KEYS[entry.status]];
  });
  if (options.length > 0) box.appendChild(el('div', 'cell-detail cell-options', options.join(' · ')));
  td.insertBefore(box, td.querySelector('.cell-origin'));
}

function removeRow(id) {
  var entry = rows.get(id);
  if (!entry) return;
  SECTION_KEYS.forEach(function (category) {
    clearTimeout(entry.cells[category].highlightTimer);
  });
  entry.row.remove();
  rows.delete(id);
  updateSummary();
}

function applyChange(message) {
  var entry = rows.get(message.hrs_id);
  if (!entry) return;
  var td = entry.cells[message.category];
  if (!td) return;
  var view = message.freshness
    ? {
        freshness: message.freshness,
        datetime: message.datetime,
        received_datetime: message.received_datetime,
        originator_id: message.originator_id,
        section: message.section,
      }
    : null;
  renderCell(td, message.category, view);
  if (message.verdict !== undefined) entry.verdict = message.verdict;
  if (message.category === 'availability') {
    showState(entry);
    place(entry);
  }
  highlight(td);
  updateSummary();
}

/** A station opened or closed by its opening hours: its verdict changes, its cells do not. */
function applyOpening(message) {
  var entry = rows.get(message.hrs_id);
  if (!entry || message.verdict === undefined) return;
  entry.verdict = message.verdict;
  showState(entry);
  place(entry);
  highlight(entry.cells.availability);
  updateSummary();
}

function highlight(td) {
  td.updates = (td.updates || 0) + 1;
  td.dataset.updated = String(td.updates);
  clearTimeout(td.highlightTimer);
  td.classList.remove('updated');
  void td.offsetWidth; // restart the animation
  td.classList.add('updated');
  td.highlightTimer = setTimeout(function () {
    td.classList.remove('updated');
  }, HIGHLIGHT_MS);
}

/** The header counts stations by state (see stationState), not readings; the sandbox's are counted apart. */
function updateSummary() {
  var counts = { available: 0, limited: 0, unavailable: 0, unknown: 0, closed: 0 };
  var sandbox = 0;
  rows.forEach(function (entry) {
    if (entry.sandbox) sandbox++;
    else counts[entry.row.dataset.state || 'unknown']++;
  });
  els.counts.stations.textContent = String(rows.size - sandbox);
  Object.keys(counts).forEach(function (state) {
    els.counts[state].textContent = String(counts[state]);
  });
  els.counts.sandbox.textContent = String(sandbox);
  els.sandbox.hidden = sandbox === 0;
  els.noStations.hidden = rows.size - sandbox > 0 || els.body.dataset.connection !== 'connected';
}

function refreshAges() {
  rows.forEach(function (entry) {
    SECTION_KEYS.forEach(function (category) {
      var td = entry.cells[category];
      if (!td.dataset.datetime) return;
      var node = td.querySelector('.age');
      if (node) node.textContent = age(td.dataset.datetime);
    });
  });
}

setInterval(refreshAges, 1000);

export { rebuild, upsertRow as upsert, applyChange as change, applyOpening as opening, removeRow as remove, updateSummary as summary, clearTable as clear };

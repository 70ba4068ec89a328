// The dashboard's station cells and times, for dashboard.js and the panels' modules:
// a cell per station and category coloured by freshness with its time, age, originator and a short
// summary of the section; every time with its date and the browser's offset. Text only (textContent).

export function el(tag, className, text) {
  var node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** Fills a cell from a category view ({freshness, datetime, received_datetime, originator_id, section}) or null. */
export function renderCell(td, category, view) {
  td.textContent = '';
  td.view = view;
  if (!view || !view.freshness) {
    td.dataset.freshness = 'none';
    delete td.dataset.datetime;
    td.removeAttribute('title');
    td.appendChild(el('span', 'no-reading', 'no reading'));
    return;
  }
  td.dataset.freshness = view.freshness;
  td.dataset.datetime = view.datetime || '';
  td.title =
    'measured ' + (localTime(view.datetime) || '?') +
    '\nreceived ' + (localTime(view.received_datetime) || '?') +
    '\noriginator ' + (view.originator_id || '?');

  var top = el('div', 'cell-top');
  top.appendChild(el('span', 'pill pill-' + view.freshness, view.freshness));
  top.appendChild(el('span', 'age', age(view.datetime)));
  td.appendChild(top);
  td.appendChild(el('div', 'cell-time', localTime(view.datetime)));

  var section = view.section;
  if (category === 'availability' && section && section.station) {
    var badges = el('div', 'badges');
    if (section.station.maintenance) badges.appendChild(badge('maintenance', 'maintenance'));
    if (section.station.limitedly_available) badges.appendChild(badge('limited', 'limitedly available'));
    if (badges.childNodes.length > 0) td.appendChild(badges);
  }
  var detail = summarise(category, section);
  if (detail) td.appendChild(el('div', 'cell-detail', detail));
  if (!section) td.appendChild(el('div', 'cell-detail', 'not published'));
  td.appendChild(el('div', 'cell-origin', view.originator_id || ''));
}

function badge(flag, text) {
  var b = el('span', 'badge badge-' + flag, text);
  b.dataset.flag = flag;
  return b;
}

export function summarise(category, section) {
  if (!section) return '';
  var list;
  switch (category) {
    case 'availability':
      // The station's flags decide, whatever the nozzles say (as the five-state summary does).
      if (section.station && section.station.maintenance) return 'unavailable: in maintenance';
      if (section.station && section.station.limitedly_available) return 'limitedly available';
      list = Array.isArray(section.nozzles) ? section.nozzles : [];
      if (list.length === 0) return 'no nozzles reported';
      return list.filter(function (n) { return n.available; }).length + ' of ' + list.length + ' nozzles available';
    case 'usage': {
      list = Array.isArray(section.nozzles) ? section.nozzles : [];
      if (list.length === 0) return 'no nozzles reported';
      var counts = {};
      list.forEach(function (n) {
        var s = String(n.usage_status);
        counts[s] = (counts[s] || 0) + 1;
      });
      return Object.keys(counts).sort().map(function (s) { return counts[s] + ' ' + s; }).join(' · ');
    }
    case 'hydrogen_storage': {
      list = Array.isArray(section.storages) ? section.storages : [];
      if (list.length === 0) return 'no storages reported';
      var low = list.filter(function (s) { return s.low_h2_storage; }).map(function (s) { return String(s.id); });
      return low.length === 0 ? 'storage ok (' + list.length + ')' : 'low: ' + low.join(', ');
    }
    case 'pricing':
      list = Array.isArray(section.products) ? section.products : [];
      return list.map(function (p) {
        return String(p.id) + ' ' + String(p.gross_price) + (p.currency ? ' ' + String(p.currency) : '');
      }).join(' · ');
  }
  return '';
}

// --- time -------------------------------------------------------------------------------------

var pad = function (n) {
  return (n < 10 ? '0' : '') + n;
};

/** The browser's offset from UTC at `d`, as `UTC+01:00`. */
export function zoneOf(d) {
  var minutes = -d.getTimezoneOffset();
  var sign = minutes < 0 ? '-' : '+';
  minutes = Math.abs(minutes);
  return 'UTC' + sign + pad(Math.floor(minutes / 60)) + ':' + pad(minutes % 60);
}

/**
 * Every time with its date and zone, in the browser's time zone: `2026-11-24 10:04:05 UTC+01:00`
 * (to the minute, `2026-11-24 10:04 UTC+01:00`, with `minutes`).
 */
export function localTime(iso, minutes) {
  var d = new Date(iso);
  if (isNaN(d.getTime())) return '';
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + (minutes ? '' : ':' + pad(d.getSeconds())) + ' ' + zoneOf(d);
}

export function age(iso) {
  var ms = Date.now() - new Date(iso).getTime();
  if (isNaN(ms)) return '';
  var s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + ' s ago';
  var m = Math.floor(s / 60);
  if (m < 60) return m + ' min ago';
  var h = Math.floor(m / 60);
  if (h < 48) return h + ' h ago';
  return Math.floor(h / 24) + ' d ago';
}

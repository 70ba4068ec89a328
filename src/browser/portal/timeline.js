// A station's signals in the portal: the last signal per category and originator, the timeline of the
// last 24 hours or 7 days as an SVG chart (one band per signal category coloured by freshness, gaps
// marked; one band per fuelling option coloured by the five-state summary; refused calls as ticks),
// with the same intervals as a table for screen readers, and the reliability table over 24 hours, 7
// days and 30 days; for operator staff, under the reliability, the station's availability forecast
// (the next 12 hours per fuelling option, as drivers see it on the public map). stations.js shows it
// for operator staff (a station's "Signals" pane) and for originator managers (a station they report
// on, originators.js, without the forecast); `base` is the API path of the station's history.
// Everything is built with DOM APIs; no text from the API is parsed as HTML.
import { api } from './api.js';
import { offsetAt, offsetText, wallClock } from './zones.js';
import { loadForecast } from './forecast.js';
import { CATEGORIES as CATEGORY_WORDS, FUELLING_OPTIONS as OPTIONS, SUMMARY_STATES } from './vocabulary.js';

var SVG = 'http://www.w3.org/2000/svg';
/** Section key, name and label of each category, from the server's vocabulary (src/domain/categories/). */
var CATEGORIES = CATEGORY_WORDS.map(function (category) {
  return [category.key, category.name, category.label];
});
var WIDTH = 900;
var LABEL = 150;
var ROW = 26;
var HOUR = 3600000;

/** A GET of the portal API, made as the page makes every call (api.js). */
function get(path) {
  return api('GET', path);
}

function h(tag, attrs, children) {
  var el = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (name) {
    if (attrs[name] === undefined || attrs[name] === null) return;
    if (name === 'text') el.textContent = attrs[name];
    else el.setAttribute(name, attrs[name]);
  });
  (children || []).forEach(function (child) {
    if (child) el.appendChild(child);
  });
  return el;
}

function s(tag, attrs, text) {
  var el = document.createElementNS(SVG, tag);
  Object.keys(attrs || {}).forEach(function (name) {
    el.setAttribute(name, String(attrs[name]));
  });
  if (text !== undefined) el.textContent = text;
  return el;
}

var pad = function (n) {
  return (n < 10 ? '0' : '') + n;
};

/**
 * The station's time zone, in which its signals, timeline and figures are shown (its own clock, as its
 * events are: the answers of the signals and the timeline name it); null: the station has none, UTC.
 */
var shownZone = null;

/** The offset from UTC of `timeZone` (the viewer's when undefined) at an instant, as `UTC+01:00`. */
function zoneOf(d, timeZone) {
  return offsetText(offsetAt(timeZone, d.getTime()));
}

/** An instant on the station's clock: `2027-03-01 13:00 UTC+01:00`. */
function when(iso) {
  if (!iso) return '—';
  var zone = shownZone || 'UTC';
  var ms = Date.parse(iso);
  var c = wallClock(zone, ms);
  return c.year + '-' + pad(c.month) + '-' + pad(c.day) + ' ' + pad(c.hour) + ':' + pad(c.minute) + ' ' + (zone === 'UTC' ? 'UTC' : zoneOf(new Date(ms), zone));
}

/** Which clock the times are on, said once under the chart. */
function zoneWords() {
  return shownZone
    ? 'Times in ' + shownZone + ', the station\'s time zone (' + zoneOf(new Date(), shownZone) + ')'
    : 'Times in UTC (the station has no time zone)';
}

function pct(x) {
  return x === null || x === undefined ? '—' : (x * 100).toFixed(1) + ' %';
}

function duration(seconds) {
  if (seconds < 3600) return Math.round(seconds / 60) + ' min';
  if (seconds < 172800) return (seconds / 3600).toFixed(1) + ' h';
  return (seconds / 86400).toFixed(1) + ' d';
}

/**
 * Shows the signals of the station whose history is at `base` (e.g. `stations/BERLA/`) in `container`;
 * `options.forecast`: its forecast too (`base` + `forecast`: operator staff's).
 */
export function show(container, base, options) {
  container.textContent = '';
  var message = h('p', { class: 'message', role: 'status', hidden: 'hidden' });
  var signals = h('div', { class: 'timeline-signals' });
  var toggle = h('div', { class: 'subtabs', role: 'group', 'aria-label': 'Timeline period' });
  var chart = h('div', { class: 'timeline-chart' });
  var figures = h('div', { class: 'timeline-figures' });
  container.appendChild(message);
  container.appendChild(h('h3', { text: 'Last signal received' }));
  container.appendChild(signals);
  container.appendChild(h('h3', { text: 'Timeline' }));
  container.appendChild(toggle);
  container.appendChild(chart);
  container.appendChild(h('h3', { text: 'Reliability' }));
  container.appendChild(figures);
  var outlook = options && options.forecast ? h('section', { class: 'timeline-forecast', 'aria-labelledby': 'forecast-title' }) : null;
  if (outlook) {
    outlook.appendChild(h('h3', { id: 'forecast-title', text: 'Availability forecast' }));
    var forecast = h('div', { class: 'forecast', 'data-state': 'loading' });
    outlook.appendChild(forecast);
    container.appendChild(outlook);
    loadForecast(forecast, base, fail);
  }

  var fail = function (result) {
    message.textContent = result.status === 0 ? 'The portal could not be reached.' : (result.body && result.body.detail) || 'HTTP ' + result.status;
    message.dataset.kind = 'error';
    message.hidden = false;
  };

  // The signals' answer names the station's time zone: the times below wait for it.
  var received = get(base + 'signals').then(function (r) {
    if (r.status !== 200) {
      fail(r);
      return null;
    }
    shownZone = r.body.time_zone || null;
    renderSignals(signals, r.body.signals);
    return r.body.signals;
  });
  ['24h', '7d'].forEach(function (period) {
    var button = h('button', { type: 'button', class: 'tab', 'data-period': period, 'aria-pressed': String(period === '24h'), text: period === '24h' ? 'Last 24 hours' : 'Last 7 days' });
    button.addEventListener('click', function () {
      Array.prototype.forEach.call(toggle.children, function (b) {
        b.setAttribute('aria-pressed', String(b === button));
      });
      loadTimeline(chart, base, period, fail);
    });
    toggle.appendChild(button);
  });
  received.then(function () {
    loadTimeline(chart, base, '24h', fail);
  });
  var periods = Promise.all(['24h', '7d', '30d'].map(function (p) {
    return get(base + 'reliability?period=' + p);
  }));
  Promise.all([received, periods]).then(function (both) {
    var results = both[1];
    // Nothing published yet (503): the first complete hour is the one under way.
    if (results.some(function (r) { return r.status === 503; })) return noCompleteHour(figures, Math.floor(Date.now() / HOUR) * HOUR + HOUR, shownZone);
    var bad = results.filter(function (r) {
      return r.status !== 200;
    })[0];
    if (bad) return fail(bad);
    var bodies = results.map(function (r) {
      return r.body;
    });
    // Signals received, none of them before the end of the last complete hour: every figure would read
    // 100 % unknown; the first hour that counts is the one under way.
    if (both[0] && both[0].length > 0 && !signalledBefore(bodies[0])) return noCompleteHour(figures, Date.parse(bodies[0].to) + HOUR, shownZone);
    renderFigures(figures, bodies);
  });
}

function renderSignals(container, signals) {
  container.textContent = '';
  if (signals.length === 0) return container.appendChild(h('p', { class: 'empty', text: 'No signal received yet.' }));
  var rows = signals.map(function (x) {
    return h('tr', { 'data-category': x.category, 'data-assignment': x.assignment }, [
      h('td', { 'data-label': 'Category', text: x.category }),
      h('td', { 'data-label': 'Originator', text: x.originator }),
      h('td', { 'data-label': 'Assignment', text: x.assignment }),
      h('td', { 'data-label': 'Received', text: when(x.received_datetime) }),
      h('td', { 'data-label': 'Measured', text: when(x.datetime) }),
    ]);
  });
  container.appendChild(h('table', { class: 'grid-table signals-table' }, [
    h('thead', {}, [h('tr', {}, ['Category', 'Originator', 'Assignment', 'Received', 'Measured'].map(function (t) {
      return h('th', { scope: 'col', text: t });
    }))]),
    h('tbody', {}, rows),
  ]));
}

function loadTimeline(container, base, period, fail) {
  container.setAttribute('aria-busy', 'true');
  get(base + 'timeline?period=' + period).then(function (r) {
    container.removeAttribute('aria-busy');
    if (r.status === 503) {
      container.textContent = '';
      return container.appendChild(h('p', { class: 'empty no-timeline', text: 'No timeline yet: the status history is brought up to date every minute or so; reload then.' }));
    }
    if (r.status !== 200) return fail(r);
    renderTimeline(container, r.body);
  });
}

/** The chart's rows: the categories, then the fuelling options the history holds. */
function seriesOf(timeline) {
  var rows = CATEGORIES.map(function (c) {
    return { key: c[0], label: c[2], kind: 'freshness', intervals: timeline.categories[c[0]] || [] };
  });
  OPTIONS.forEach(function (option) {
    var list = timeline.fuelling_options[option];
    if (list) rows.push({ key: option, label: 'Option ' + option, kind: 'summary', intervals: list });
  });
  return rows;
}

function renderTimeline(container, timeline) {
  container.textContent = '';
  var from = Date.parse(timeline.from);
  var to = Date.parse(timeline.to);
  var span = Math.max(1, to - from);
  var x = function (iso) {
    return LABEL + ((Math.min(to, Math.max(from, Date.parse(iso))) - from) / span) * (WIDTH - LABEL - 10);
  };
  var rows = seriesOf(timeline);
  var top = 30;
  var height = top + (rows.length + 1) * ROW + 24;
  var svg = s('svg', { class: 'timeline', viewBox: '0 0 ' + WIDTH + ' ' + height, role: 'img', 'data-period': timeline.period });
  var summary = rows.map(function (row) {
    var gaps = row.intervals.filter(function (i) {
      return i.state === 'unknown';
    }).length;
    return row.label + ': ' + row.intervals.length + ' intervals' + (row.kind === 'freshness' && gaps ? ', ' + gaps + ' gaps' : '');
  });
  svg.setAttribute('aria-label', 'Timeline from ' + when(timeline.from) + ' to ' + when(timeline.to) + '. ' + summary.join('; ') + '. The table below lists the same intervals.');

  // Refused calls: ticks on the top row.
  svg.appendChild(s('text', { x: 4, y: top - 10, class: 'row-label' }, 'Refused calls'));
  timeline.rejected_calls.forEach(function (call) {
    var tick = s('line', { x1: x(call.time), x2: x(call.time), y1: top - 22, y2: top - 4, class: 'rejected-call', 'data-time': call.time });
    tick.appendChild(s('title', {}, when(call.time) + ' · ' + call.status + ' · ' + call.endpoint + ' · ' + call.originator));
    svg.appendChild(tick);
  });
  rows.forEach(function (row, index) {
    var y = top + index * ROW;
    svg.appendChild(s('text', { x: 4, y: y + 17, class: 'row-label' }, row.label));
    svg.appendChild(s('rect', { x: LABEL, y: y + 3, width: WIDTH - LABEL - 10, height: ROW - 6, class: 'band-none' }));
    row.intervals.forEach(function (i) {
      var left = x(i.from);
      var width = Math.max(0.5, x(i.to) - left);
      var rect = s('rect', {
        x: left, y: y + 3, width: width, height: ROW - 6,
        class: 'band band-' + i.state.toLowerCase() + (row.kind === 'freshness' && i.state === 'unknown' ? ' gap' : ''),
        'data-series': row.key, 'data-state': i.state, 'data-from': i.from, 'data-to': i.to,
      });
      rect.appendChild(s('title', {}, row.label + ': ' + (i.state === 'unknown' && row.kind === 'freshness' ? 'gap (unknown)' : i.state) + (i.reason ? ' (' + i.reason + ')' : '') + ', ' + when(i.from) + ' – ' + when(i.to)));
      svg.appendChild(rect);
    });
  });
  // The time axis, in the browser's time zone.
  var axisY = top + rows.length * ROW + 6;
  svg.appendChild(s('line', { x1: LABEL, x2: WIDTH - 10, y1: axisY, y2: axisY, class: 'axis' }));
  var step = timeline.period === '7d' ? 24 * HOUR : 3 * HOUR;
  var first = new Date(from);
  first.setMinutes(0, 0, 0);
  if (step > HOUR) first.setHours(timeline.period === '7d' ? 0 : Math.ceil(first.getHours() / 3) * 3);
  for (var t = first.getTime(); t <= to; t += step) {
    if (t < from) continue;
    var d = new Date(t);
    var tx = x(d.toISOString());
    svg.appendChild(s('line', { x1: tx, x2: tx, y1: axisY, y2: axisY + 5, class: 'axis' }));
    var label = timeline.period === '7d' ? pad(d.getMonth() + 1) + '-' + pad(d.getDate()) : pad(d.getHours()) + ':00';
    svg.appendChild(s('text', { x: tx, y: axisY + 17, class: 'axis-label', 'text-anchor': 'middle' }, label));
  }
  container.appendChild(svg);
  container.appendChild(legend());
  container.appendChild(h('p', { class: 'muted', text: zoneWords() + '; up to ' + when(timeline.to) + '.' }));
  container.appendChild(intervalTable(rows));
}

function legend() {
  // The five states as the summary names them (a summary's UNKNOWN has a swatch of its own, apart from a gap).
  var states = SUMMARY_STATES.map(function (state) {
    return [state === 'UNKNOWN' ? 'summary-unknown' : state.toLowerCase(), state.replace(/_/g, ' ')];
  });
  var items = [['fresh', 'fresh'], ['stale', 'stale'], ['unknown', 'gap (unknown)']].concat(states, [['none', 'no signal yet']]);
  return h('ul', { class: 'legend timeline-legend' }, items.map(function (item) {
    return h('li', {}, [h('span', { class: 'swatch band-' + item[0], 'aria-hidden': 'true' }), document.createTextNode(item[1])]);
  }).concat([h('li', {}, [h('span', { class: 'swatch rejected-swatch', 'aria-hidden': 'true' }), document.createTextNode('refused call')])]));
}

/** The same intervals as a table (folded): what the chart shows, for screen readers and copying. */
function intervalTable(rows) {
  var body = [];
  rows.forEach(function (row) {
    row.intervals.slice(0, 200).forEach(function (i) {
      body.push(h('tr', {}, [
        h('td', { 'data-label': 'Series', text: row.label }),
        h('td', { 'data-label': 'State', text: i.state + (i.reason ? ' (' + i.reason + ')' : '') }),
        h('td', { 'data-label': 'From', text: when(i.from) }),
        h('td', { 'data-label': 'To', text: when(i.to) }),
      ]));
    });
  });
  return h('details', { class: 'interval-table' }, [
    h('summary', { text: 'The intervals as a table' }),
    h('table', { class: 'grid-table' }, [
      h('thead', {}, [h('tr', {}, ['Series', 'State', 'From', 'To'].map(function (t) {
        return h('th', { scope: 'col', text: t });
      }))]),
      h('tbody', {}, body),
    ]),
  ]);
}

/** Whether any category had a reading before the end of the period's last complete hour. */
function signalledBefore(figures) {
  return Object.keys(figures.categories).some(function (k) {
    return figures.categories[k].last_signal !== null;
  });
}

/** Says that no complete hour counts yet, and when the first one ends (`end`, epoch ms), instead of figures. */
/**
 * Figures with no complete hour yet: when the first ends, on the station's clock (`timeZone`; null: UTC)
 * or, for an originator's figures over many stations (undefined), on the viewer's.
 */
export function noCompleteHour(container, end, timeZone) {
  container.textContent = '';
  var d = new Date(end);
  var zone = timeZone === undefined ? undefined : timeZone || 'UTC';
  var c = wallClock(zone, end);
  container.appendChild(h('p', {
    class: 'empty no-complete-hour',
    'data-ends': new Date(end).toISOString(),
    text: 'No complete hour yet: reliability is counted per complete hour, the first one ends at ' + pad(c.hour) + ':' + pad(c.minute) + ' (' + (zone === 'UTC' ? 'UTC' : (zone ? zone + ', ' : '') + zoneOf(d, zone)) + ').',
  }));
}

function renderFigures(container, periods) {
  container.textContent = '';
  var periodName = function (p) {
    return p.period === '24h' ? '24 hours' : p.period === '7d' ? '7 days' : '30 days';
  };
  var head = h('tr', {}, [h('th', { scope: 'col', text: '' })].concat(periods.map(function (p) {
    return h('th', { scope: 'col', text: periodName(p) });
  })));
  var rows = [];
  // Each cell named by its period: on a phone the table is a card per figure (registry.css).
  var row = function (label, key, cell) {
    rows.push(h('tr', { 'data-figure': key }, [h('th', { scope: 'row', text: label })].concat(periods.map(function (p) {
      return h('td', { 'data-label': periodName(p), text: cell(p) });
    }))));
  };
  CATEGORIES.forEach(function (c) {
    var k = c[0];
    row(c[2] + ': fresh / stale / unknown', k + '-shares', function (p) {
      var f = p.categories[k];
      return pct(f.shares.fresh) + ' / ' + pct(f.shares.stale) + ' / ' + pct(f.shares.unknown);
    });
    row(c[2] + ': readings', k + '-readings', function (p) {
      return String(p.categories[k].readings);
    });
    if (k === 'availability' || k === 'usage') {
      row(c[2] + ': gaps over 30 min (longest)', k + '-gaps', function (p) {
        var g = p.categories[k].gaps;
        return g.count === 0 ? 'none' : g.count + ' (' + duration(g.longest_seconds) + (g.ongoing ? ', ongoing' : '') + ')';
      });
    }
  });
  var options = periods[0].fuelling_options.map(function (o) {
    return o.fuelling_option;
  });
  options.forEach(function (option) {
    row('Option ' + option + ': AVAILABLE in opening hours', 'option-' + option, function (p) {
      var o = p.fuelling_options.filter(function (x) {
        return x.fuelling_option === option;
      })[0];
      return o ? pct(o.available_share_of_opening_hours) : '—';
    });
  });
  container.appendChild(h('table', { class: 'grid-table figures-table' }, [h('thead', {}, [head]), h('tbody', {}, rows)]));
  container.appendChild(h('p', { class: 'muted', text: 'Up to ' + when(periods[0].to) + ' (the end of the last complete hour). Time before the first signal counts as unknown.' }));
}



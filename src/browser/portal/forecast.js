// A station's availability forecast in the portal, under its reliability on the Signals pane
// (timeline.js asks for it, for operator staff): GET /portal/v1/stations/{hrs_id}/forecast, the body of
// export v2's and the public map's, drawn as the map's station panel draws it, in the portal's words.
// Everything is built with DOM APIs; no text from the API is parsed as HTML.
import { api } from './api.js';
import { offsetAt, offsetText, wallClock } from './zones.js';
import { FUELLING_OPTIONS as OPTIONS } from './vocabulary.js';

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

var pad = function (n) {
  return (n < 10 ? '0' : '') + n;
};

/** The likelihood words, best first (src/domain/export-v2/forecast.ts), as the portal says them. */
var LIKELIHOODS = ['very_likely', 'likely', 'uncertain', 'unlikely', 'very_unlikely', 'closed'];

/** An instant's hour and minute on `zone`'s clock: `14:00`. */
function clockTime(iso, zone) {
  var c = wallClock(zone, Date.parse(iso));
  return pad(c.hour) + ':' + pad(c.minute);
}

/** Reads the station's forecast (`base` + `forecast`) into `container`; `fail` shows a refusal other than 503. */
export function loadForecast(container, base, fail) {
  container.setAttribute('aria-busy', 'true');
  Promise.all([api('GET', base + 'forecast'), api('GET', base + 'drivers-waiting')]).then(function (answers) {
    var r = answers[0];
    container.removeAttribute('aria-busy');
    container.textContent = '';
    if (r.status === 503) {
      container.dataset.state = 'not_published';
      container.appendChild(h('p', { class: 'empty no-forecast', text: 'No forecast yet: no hour of status history is published. The history worker publishes each hour within minutes of its end; reload then.' }));
    } else if (r.status !== 200) {
      container.dataset.state = 'error';
      fail(r);
    } else renderForecast(container, r.body);
    if (answers[1].status === 200) container.insertBefore(driversWaiting(answers[1].body), container.firstChild);
  });
}

/**
 * How many drivers wait for an alert about the station (counts of confirmed driver alerts, never an
 * address), per fuelling option: for it to be available again, and for it to go down.
 */
function driversWaiting(body) {
  var options = body.fuelling_options;
  var text = options.length === 0
    ? 'none'
    : options.map(function (o) {
      return 'option ' + o.fuelling_option + ': ' + o.available + ' waiting for it to be available again, ' + o.unavailable + ' for it to go down';
    }).join('; ');
  return h('dl', { class: 'outlook-lines drivers-waiting' }, [
    h('dt', { text: 'Drivers waiting for e-mail alerts' }),
    h('dd', { text: text + ' (counts only: the portal never shows their addresses)' }),
  ]);
}

/**
 * The forecast as drivers see it on the public map: per fuelling option the next 12 hours on the
 * station's clock, each a bar as long as its probability (by class: the page's policy allows no inline
 * style), the word and the probability; "not enough history yet" for an option learned from too little.
 * Above them, a list of lines about the station's outlook (`dl.outlook-lines`): when the forecast was
 * made and what it was learned from. Further lines about the station's drivers (such as how many wait
 * for alerts about it) belong in that list.
 */
function renderForecast(container, forecast) {
  var zone = forecast.time_zone || 'UTC';
  container.dataset.state = 'ready';
  container.dataset.generated = forecast.generated_at;
  var zoneText = forecast.time_zone
    ? 'Hours on the station\'s clock (' + zone + ', ' + offsetText(offsetAt(zone, Date.parse(forecast.generated_at))) + ')'
    : 'Hours in UTC (the station has no time zone)';
  container.appendChild(h('p', { class: 'muted', text: 'The next 12 hours, as drivers see them on the public map: learned from the station\'s own status history. ' + zoneText + '.' }));
  var at = function (iso) {
    var c = wallClock(zone, Date.parse(iso));
    return c.year + '-' + pad(c.month) + '-' + pad(c.day) + ' ' + pad(c.hour) + ':' + pad(c.minute);
  };
  container.appendChild(h('dl', { class: 'outlook-lines' }, [
    h('dt', { text: 'Forecast made' }), h('dd', { text: at(forecast.generated_at) }),
    h('dt', { text: 'History learned from' }), h('dd', { text: 'up to ' + at(forecast.history_until) + ' (the last hour published)' }),
  ]));
  var ordered = OPTIONS.filter(function (option) {
    return forecast.fuelling_options.some(function (o) { return o.fuelling_option === option; });
  }).map(function (option) {
    return forecast.fuelling_options.filter(function (o) { return o.fuelling_option === option; })[0];
  });
  if (ordered.length === 0) return container.appendChild(h('p', { class: 'empty', text: 'No fuelling option to forecast: the station has no confirmed layout with nozzles.' }));
  ordered.forEach(function (option) {
    var part = h('div', { class: 'forecast-option', 'data-option': option.fuelling_option, 'data-status': option.status });
    part.appendChild(h('h4', { text: 'Option ' + option.fuelling_option + ' (' + option.status.replace(/_/g, ' ') + ' now)' }));
    if (option.forecast === null) {
      var known = option.history.known_hours;
      part.appendChild(h('p', {
        class: 'empty forecast-none',
        text: 'Not enough history yet: ' + known + ' known hour' + (known === 1 ? '' : 's') + (option.history.from ? ' since ' + at(option.history.from) : '') +
          '; a forecast needs 168 over at least 14 days.',
      }));
      return container.appendChild(part);
    }
    var rows = option.forecast.map(function (hour, index) {
      var word = LIKELIHOODS.indexOf(hour.likelihood) >= 0 ? hour.likelihood : 'uncertain';
      var steps = Math.round(Math.min(1, Math.max(0, hour.probability)) * 20);
      var bar = h('span', { class: 'forecast-bar', 'aria-hidden': 'true' }, [h('span', { class: 'forecast-fill fc-' + word + ' fc-p' + steps })]);
      return h('tr', { 'data-likelihood': hour.likelihood, 'data-from': hour.from }, [
        h('th', { scope: 'row', text: clockTime(hour.from, zone) + (index === 0 ? ' (now)' : '') }),
        h('td', {}, [h('span', { class: 'forecast-cell' }, [bar, h('span', { class: 'forecast-word', text: word.replace(/_/g, ' ') })])]),
        h('td', { class: 'forecast-probability', text: hour.likelihood === 'closed' ? '—' : Math.round(hour.probability * 100) + ' %' }),
      ]);
    });
    part.appendChild(h('table', { class: 'grid-table forecast-table' }, [
      h('caption', { class: 'visually-hidden', text: 'Option ' + option.fuelling_option + ': how likely it is available, hour by hour' }),
      h('thead', {}, [h('tr', {}, ['Hour', 'Available?', 'Probability'].map(function (t) {
        return h('th', { scope: 'col', text: t });
      }))]),
      h('tbody', {}, rows),
    ]));
    container.appendChild(part);
  });
}

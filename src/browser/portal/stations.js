// Operator staff's stations in the portal page: the list, and a station's panes: its record, photo,
// assignments, audit trail, its layout with its diff and confirmation (layout-pane.js), its events and
// broadcast (station-events.js) and its signals (timeline.js). Every text from the API is set with
// textContent.
import { $, api, h } from './api.js';
import { load as loadLayoutPane } from './layout-pane.js';
import { numberIn, pickList, problemText, say, segment, tell, when } from './registry-parts.js';
import { load as loadStationEvents } from './station-events.js';
import { show as showPin } from './station-pin.js';
import { show as showTimeline } from './timeline.js';
import { SIGNAL_TYPES, STATION_STATE_KEYS, STATION_STATE_WORDS, V1_FUEL_TYPES as FUEL_TYPES, VEHICLE_CATEGORIES } from './vocabulary.js';

var API = '/portal/v1/';
var station = null; // { hrs_id, operator, ... } of the open station

var stationMessage = $('station-message');

export function loadStations() {
  api('GET', 'stations').then(function (result) {
    var stations = result.status === 200 ? result.body.stations : [];
    $('no-stations').hidden = stations.length > 0;
    pickList(
      $('station-list'),
      stations.map(function (s) {
        var state = s.status ? STATION_STATE_KEYS[s.status] : null;
        return { id: s.hrs_id, name: s.name, draft: s.has_draft, state: state, note: [state ? STATION_STATE_WORDS[state] : null, s.hint].filter(Boolean).join(' · ') };
      }),
      function (s) {
        return s.id + ' · ' + s.name + (s.draft ? ' (draft)' : '');
      },
      function (id) {
        openStation(id);
        tell('navigated', '/stations/' + segment(id));
      },
      station ? station.hrs_id : wantedStation,
    );
  });
}

/** The station asked for last (its answer may still be on its way). */
var wantedStation = null;

/** Opens a station on a pane ('record' when not named); the focus goes to its title, on a phone scrolled to. */
export function openStation(hrsId, pane) {
  pane = PANES.indexOf(pane) >= 0 ? pane : 'record';
  if (station && station.hrs_id === hrsId && !$('station-detail').hidden) return showPane(pane);
  wantedStation = hrsId;
  say(stationMessage, '');
  api('GET', 'stations/' + segment(hrsId)).then(function (result) {
    if (wantedStation !== hrsId) return;
    if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
    station = result.body;
    $('station-detail').hidden = false;
    $('station-title').textContent = station.hrs_id + ' · ' + station.name;
    Array.prototype.forEach.call($('station-list').querySelectorAll('button'), function (b) {
      if (b.dataset.id === hrsId) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    });
    fillRecord(station);
    showPane(pane);
    $('station-title').focus();
  });
}

export function closeStation() {
  station = null;
  wantedStation = null;
  $('station-detail').hidden = true;
  Array.prototype.forEach.call($('station-list').querySelectorAll('button'), function (b) {
    b.removeAttribute('aria-current');
  });
}

var PANES = ['record', 'layout', 'events', 'photo', 'assignments', 'audit', 'signals'];
var LOADERS = { record: showPin, layout: loadLayout, events: loadEvents, photo: loadPhoto, assignments: loadAssignments, audit: loadAudit, signals: loadSignals };

/** The station's signals, timeline, reliability and forecast (timeline.js). */
function loadSignals() {
  showTimeline($('pane-signals'), 'stations/' + segment(station.hrs_id) + '/', { forecast: true });
}

function showPane(name) {
  PANES.forEach(function (pane) {
    $('pane-' + pane).hidden = pane !== name;
  });
  Array.prototype.forEach.call(document.querySelectorAll('#station-detail .subtabs .tab'), function (tab) {
    tab.setAttribute('aria-pressed', String(tab.dataset.pane === name));
  });
  if (LOADERS[name]) LOADERS[name]();
}

Array.prototype.forEach.call(document.querySelectorAll('#station-detail .subtabs .tab'), function (tab) {
  tab.addEventListener('click', function () {
    say(stationMessage, '');
    showPane(tab.dataset.pane);
    tell('navigated', '/stations/' + segment(station.hrs_id) + '/' + tab.dataset.pane);
  });
});

// The record: a checkbox per v1 fuel type, as the vocabulary lists them (apart as words in a line are).
FUEL_TYPES.forEach(function (code) {
  var box = h('input', { id: 'record-' + code, type: 'checkbox', value: code });
  $('record-v1').append(' ', h('label', { for: 'record-' + code, class: 'check' }, [box, document.createTextNode(' ' + code)]));
});

// The AFIR details the form has fields for (the rest stay in "More AFIR details" as JSON).
var ADDRESS_FIELDS = { street: 'record-street', house_number: 'record-house', postal_code: 'record-postcode', city: 'record-city' };
var FORM_KEYS = ['address', 'country', 'coordinates', 'contact_phone_number', 'cumulative_daily_hydrogen_capacity', 'vehicle_types'];

VEHICLE_CATEGORIES.forEach(function (code) {
  var box = h('input', { id: 'record-vehicle-' + code, type: 'checkbox', value: code });
  $('record-vehicles').appendChild(h('label', { for: 'record-vehicle-' + code, class: 'check' }, [box, document.createTextNode(' ' + code)]));
});

function fillRecord(s) {
  clearFieldErrors();
  $('record-name').value = s.name;
  $('record-heavy').checked = s.heavy_duty;
  $('record-hours').value = s.opening_hours || '';
  $('record-zone').value = s.time_zone || '';
  FUEL_TYPES.forEach(function (code) {
    $('record-' + code).checked = s.v1_fuel_types.indexOf(code) >= 0;
  });
  var d = s.details || {};
  // An address written as one line stays as it is, in the JSON; a structured one fills the fields.
  var address = d.address && typeof d.address === 'object' ? d.address : {};
  Object.keys(ADDRESS_FIELDS).forEach(function (key) {
    $(ADDRESS_FIELDS[key]).value = typeof address[key] === 'string' ? address[key] : '';
  });
  $('record-country').value = typeof d.country === 'string' ? d.country : typeof address.country === 'string' ? address.country : '';
  $('record-lat').value = d.coordinates ? String(d.coordinates.lat) : '';
  $('record-lon').value = d.coordinates ? String(d.coordinates.lon) : '';
  $('record-phone').value = d.contact_phone_number || '';
  $('record-capacity').value = d.cumulative_daily_hydrogen_capacity === undefined ? '' : String(d.cumulative_daily_hydrogen_capacity);
  VEHICLE_CATEGORIES.forEach(function (code) {
    $('record-vehicle-' + code).checked = Array.isArray(d.vehicle_types) && d.vehicle_types.indexOf(code) >= 0;
  });
  var rest = {};
  Object.keys(d).forEach(function (key) {
    if (FORM_KEYS.indexOf(key) < 0 || (key === 'address' && typeof d.address === 'string')) rest[key] = d[key];
    else if (key === 'address') {
      // Address members the form has no field for (a country inside it is shown as the country).
      Object.keys(d.address).forEach(function (member) {
        if (!(member in ADDRESS_FIELDS) && member !== 'country') (rest.address = rest.address || {})[member] = d.address[member];
      });
    }
  });
  $('record-details').value = Object.keys(rest).length > 0 ? JSON.stringify(rest, null, 2) : '';
}

/** The details from the fields and the JSON of the others; a problem per field it names, or null. */
function detailsFromForm() {
  var problems = {};
  var details;
  try {
    details = $('record-details').value.trim() === '' ? {} : JSON.parse($('record-details').value);
  } catch (e) {
    problems['details'] = 'not valid JSON: ' + e.message;
    return { problems: problems };
  }
  if (details === null || typeof details !== 'object' || Array.isArray(details)) {
    problems['details'] = 'must be a JSON object ({ … })';
    return { problems: problems };
  }
  var address = details.address && typeof details.address === 'object' ? details.address : {};
  var typed = false;
  Object.keys(ADDRESS_FIELDS).forEach(function (key) {
    var value = $(ADDRESS_FIELDS[key]).value.trim();
    if (value) {
      address[key] = value;
      typed = true;
    }
  });
  if (typed) details.address = address;
  var country = $('record-country').value.trim();
  if (country) details.country = country;
  var lat = numberIn('record-lat');
  var lon = numberIn('record-lon');
  if (lat !== undefined || lon !== undefined) {
    if (lat === undefined || Number.isNaN(lat)) problems['details.coordinates.lat'] = lat === undefined ? 'give the latitude with the longitude' : 'must be a number, e.g. 52.3667';
    if (lon === undefined || Number.isNaN(lon)) problems['details.coordinates.lon'] = lon === undefined ? 'give the longitude with the latitude' : 'must be a number, e.g. 13.5033';
    details.coordinates = { lat: lat, lon: lon };
  }
  var phone = $('record-phone').value.trim().replace(/[\s()-]/g, '');
  if (phone) details.contact_phone_number = phone;
  var capacity = numberIn('record-capacity');
  if (capacity !== undefined) {
    if (Number.isNaN(capacity)) problems['details.cumulative_daily_hydrogen_capacity'] = 'must be a number (kg per day)';
    details.cumulative_daily_hydrogen_capacity = capacity;
  }
  var vehicles = VEHICLE_CATEGORIES.filter(function (code) {
    return $('record-vehicle-' + code).checked;
  });
  if (vehicles.length > 0) details.vehicle_types = vehicles;
  return { details: details, problems: Object.keys(problems).length > 0 ? problems : null };
}

/** Each problem beside the field its path names (`details.address.city: must not be empty`); true when some field took one. */
function showFieldErrors(problems) {
  clearFieldErrors();
  var placed = false;
  Object.keys(problems).forEach(function (path) {
    var field = $('pane-record').querySelector('[data-path="' + path + '"]');
    if (!field) return;
    placed = true;
    field.setAttribute('aria-invalid', 'true');
    var note = h('span', { id: field.id + '-error', class: 'record-error', text: problems[path] });
    field.insertAdjacentElement('afterend', note);
    field.setAttribute('aria-describedby', ((field.getAttribute('aria-describedby') || '') + ' ' + note.id).trim());
    if (field.id === 'record-details') $('record-more').open = true;
  });
  return placed;
}

function clearFieldErrors() {
  Array.prototype.forEach.call($('pane-record').querySelectorAll('.record-error'), function (note) {
    var field = $(note.id.replace(/-error$/, ''));
    if (field) {
      field.removeAttribute('aria-invalid');
      var rest = (field.getAttribute('aria-describedby') || '').split(' ').filter(function (id) { return id && id !== note.id; }).join(' ');
      if (rest) field.setAttribute('aria-describedby', rest);
      else field.removeAttribute('aria-describedby');
    }
    note.remove();
  });
}

/** The API's `field: message; field: message` detail, by field. */
function problemsOf(detail) {
  var out = {};
  String(detail || '').split('; ').forEach(function (part) {
    var at = part.indexOf(': ');
    if (at > 0) out[part.slice(0, at)] = part.slice(at + 2);
  });
  return out;
}

$('pane-record').addEventListener('submit', function (event) {
  event.preventDefault();
  var formed = detailsFromForm();
  if (formed.problems) {
    showFieldErrors(formed.problems);
    return say(stationMessage, 'Some fields need a look: each says why beside it.', 'error');
  }
  var details = formed.details;
  var record = {
    name: $('record-name').value,
    heavy_duty: $('record-heavy').checked,
    opening_hours: $('record-hours').value.trim() || null,
    time_zone: $('record-zone').value.trim() || null,
    details: details,
    v1_fuel_types: FUEL_TYPES.filter(function (code) {
      return $('record-' + code).checked;
    }),
  };
  api('PUT', 'stations/' + segment(station.hrs_id), record).then(function (result) {
    if (result.status === 422 && result.body && result.body.code === 'layout_contradiction') {
      return say(stationMessage, problemText(result) + '. A nozzle and its v1 fuel type change together: change the draft on the Layout tab, ' +
        'and its confirmation offers to set the v1 fuel types with it.', 'error');
    }
    if (result.status === 400 && result.body && showFieldErrors(problemsOf(result.body.detail))) {
      return say(stationMessage, 'Not saved: ' + problemText(result), 'error');
    }
    if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
    station = result.body;
    fillRecord(station);
    $('station-title').textContent = station.hrs_id + ' · ' + station.name;
    say(stationMessage, 'Record saved.', 'ok');
  });
});

// The layout (layout-pane.js) and the events (station-events.js): they ask for the open station.
var paneContext = {
  station: function () {
    return station;
  },
  say: function (text, kind) {
    say(stationMessage, text, kind);
  },
  problemText: problemText,
  when: when,
  /** A confirmation may change the record too (its v1 fuel types): the list and the record follow. */
  stationsChanged: function () {
    loadStations();
    refreshStation().then(function () {
      fillRecord(station);
    });
  },
};

function loadLayout() {
  loadLayoutPane(paneContext);
}

function loadEvents() {
  loadStationEvents(paneContext);
}

// The photo.
function loadPhoto() {
  var img = $('photo-img');
  img.hidden = !station.photo;
  $('no-photo').hidden = !!station.photo;
  $('photo-remove').disabled = !station.photo;
  if (station.photo) img.src = API + 'stations/' + segment(station.hrs_id) + '/photo?v=' + station.photo.sha256;
}

function refreshStation() {
  return api('GET', 'stations/' + segment(station.hrs_id)).then(function (result) {
    if (result.status === 200) station = result.body;
  });
}

$('photo-upload').addEventListener('click', function () {
  var file = $('photo-file').files[0];
  if (!file) return say(stationMessage, 'Choose an image first.', 'error');
  api('PUT', 'stations/' + segment(station.hrs_id) + '/photo', file).then(function (result) {
    if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
    say(stationMessage, 'Photo stored.', 'ok');
    refreshStation().then(loadPhoto);
  });
});

$('photo-remove').addEventListener('click', function () {
  api('DELETE', 'stations/' + segment(station.hrs_id) + '/photo').then(function (result) {
    if (result.status !== 204) return say(stationMessage, problemText(result), 'error');
    say(stationMessage, 'Photo removed.', 'ok');
    refreshStation().then(loadPhoto);
  });
});

// Assignments: originators × signal types, a choice per cell.
function loadAssignments() {
  api('GET', 'stations/' + segment(station.hrs_id) + '/assignments').then(function (result) {
    if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
    var head = $('assignment-head');
    var rows = $('assignment-rows');
    head.textContent = '';
    rows.textContent = '';
    head.appendChild(h('tr', {}, [h('th', { scope: 'col', text: 'Originator' })].concat(SIGNAL_TYPES.map(function (type) {
      return h('th', { scope: 'col', text: type });
    }))));
    var state = {};
    result.body.assignments.forEach(function (a) {
      state[a.originator + ' ' + a.signal_type] = a.state;
    });
    result.body.originators.forEach(function (o) {
      rows.appendChild(h('tr', {}, [h('th', { scope: 'row', text: o.name + ' (' + o.id + ')' })].concat(SIGNAL_TYPES.map(function (type) {
        var choices = type === 'v1' ? ['none', 'live', 'testing', 'inactive'] : ['none', 'live', 'testing'];
        var current = state[o.id + ' ' + type] || 'none';
        var select = h('select', { 'aria-label': o.id + ' ' + type }, choices.map(function (c) {
          return h('option', { value: c, text: c, selected: c === current });
        }));
        select.addEventListener('change', function () {
          var wanted = select.value;
          api('PUT', 'stations/' + segment(station.hrs_id) + '/assignments/' + segment(o.id) + '/' + type, { state: wanted }).then(function (r) {
            if (r.status !== 200) {
              select.value = current;
              return say(stationMessage, problemText(r), 'error');
            }
            current = wanted;
            say(stationMessage, o.id + ' is now ' + wanted + ' for ' + type + ' at ' + station.hrs_id + '.', 'ok');
          });
        });
        return h('td', { 'data-label': type }, [select]);
      }))));
    });
  });
}

// The audit trail.
function auditLine(e) {
  var what = e.action + (e.subject ? ' ' + e.subject : '') + (e.originator_id ? ' (' + e.originator_id + ')' : '');
  return h('li', {}, [h('span', { class: 'muted', text: when(e.at) + ' · ' + e.actor + ' · ' }), h('span', { text: what })]);
}

function loadAudit() {
  api('GET', 'stations/' + segment(station.hrs_id) + '/audit?limit=100').then(function (result) {
    var list = $('audit-rows');
    list.textContent = '';
    if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
    result.body.entries.forEach(function (e) {
      list.appendChild(auditLine(e));
    });
    if (result.body.entries.length === 0) list.appendChild(h('li', { class: 'muted', text: 'No changes recorded yet.' }));
  });
}

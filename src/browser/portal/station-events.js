// A station's Events tab (opened by stations.js): its events, past ones too, and the form that announces
// one (on this station or every station of the operator) or changes one. Times are the station's own:
// typed and shown in its time zone (the record's `time_zone`: the one set, else the one at its
// coordinates; UTC when it has none), named beside the form with its offset from UTC on the date typed,
// whatever zone the browser is in.
import { $, api, h } from './api.js';
import { EVENT_KINDS } from './vocabulary.js';
import { offsetAt, offsetText, wallClock } from './zones.js';

// The kinds an event may have, as the vocabulary lists them.
EVENT_KINDS.forEach(function (kind) {
  $('event-kind').append(h('option', { text: kind }));
});

var ctx = null; // stations.js's context: station(), say(), problemText()
var editing = null; // the event being changed through the form (null: the form announces a new one)

function zone() {
  return ctx.station().time_zone || 'UTC';
}

function segment(id) {
  return encodeURIComponent(id);
}

function pad(n) {
  return String(n).padStart(2, '0');
}

/**
 * The instant of `value` (`yyyy-mm-ddThh:mm`, a datetime-local field's) read in the station's zone, as
 * ISO 8601; null when empty. A time skipped by a clock change is read with the offset before it.
 */
function isoFromZoned(value, timeZone) {
  var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value || '');
  if (!m) return null;
  var wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
  var guess = wall - offsetAt(timeZone, wall) * 60000;
  return new Date(wall - offsetAt(timeZone, guess) * 60000).toISOString();
}

/** The instant as `yyyy-mm-ddThh:mm` on the station's wall clock, as a datetime-local field takes it. */
function zonedFromIso(iso, timeZone) {
  if (!iso) return '';
  var c = wallClock(timeZone, Date.parse(iso));
  return c.year + '-' + pad(c.month) + '-' + pad(c.day) + 'T' + pad(c.hour) + ':' + pad(c.minute);
}

function shown(iso) {
  if (!iso) return '—';
  // A station's thing: in the station's own zone, the zone named ("1 Dec 2036, 09:00 CET").
  return new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: zone(), timeZoneName: 'short' }).format(new Date(iso));
}

/** The zone named beside the form: its name and its offset on the start date typed (today when none). */
var note = null; // the zone's note, made on first use (the page has no place for it)

function nameZone() {
  if (!note) {
    note = h('p', { id: 'event-zone', class: 'zone-note' });
    $('pane-events').insertBefore(note, $('pane-events').firstChild);
    ['event-starts', 'event-ends'].forEach(function (id) {
      $(id).setAttribute('aria-describedby', 'event-zone');
    });
  }
  var starts = isoFromZoned($('event-starts').value, zone());
  var at = starts ? Date.parse(starts) : Date.now();
  note.textContent = ctx.station().time_zone
    ? 'Times are the station\'s local time: ' + zone() + ', ' + offsetText(offsetAt(zone(), at)) + (starts ? ' on that date.' : ' today.')
    : 'Times are in UTC: the station has no time zone (set one on the Record tab).';
}

export function load(context) {
  ctx = context;
  nameZone();
  var station = ctx.station();
  api('GET', 'stations/' + segment(station.hrs_id) + '/events').then(function (result) {
    var rows = $('event-rows');
    rows.textContent = '';
    if (result.status !== 200) return ctx.say(ctx.problemText(result), 'error');
    var now = Date.now();
    result.body.events.forEach(function (e) {
      var running = Date.parse(e.starts_at) <= now && (!e.ends_at || Date.parse(e.ends_at) > now);
      var end = running
        ? h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'End the event ' + e.id + ' now', text: 'End now', onclick: function () {
            api('POST', 'stations/' + segment(station.hrs_id) + '/events/' + segment(e.id) + '/end').then(function (r) {
              if (r.status !== 200) return ctx.say(ctx.problemText(r), 'error');
              ctx.say('Event ended.', 'ok');
              load(ctx);
            });
          } })
        : null;
      var edit = h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Change the event ' + e.id, text: 'Change', onclick: function () {
        editEvent(e);
      } });
      rows.appendChild(h('tr', {}, [
        h('td', { 'data-label': 'Kind', text: e.kind }),
        h('td', { 'data-label': 'Starts', text: shown(e.starts_at) }),
        h('td', { 'data-label': 'Ends', text: shown(e.ends_at) }),
        h('td', { 'data-label': 'Description', text: e.description }),
        h('td', {}, [edit, end]),
      ]));
    });
  });
}

function editEvent(e) {
  editing = e.id;
  $('event-kind').value = e.kind;
  $('event-starts').value = zonedFromIso(e.starts_at, zone());
  $('event-ends').value = zonedFromIso(e.ends_at, zone());
  $('event-description').value = e.description;
  $('event-broadcast').checked = false;
  $('event-broadcast').disabled = true;
  $('event-submit').textContent = 'Save changes';
  nameZone();
  $('event-kind').focus();
}

function resetEventForm() {
  editing = null;
  $('event-form').reset();
  $('event-broadcast').disabled = false;
  $('event-submit').textContent = 'Announce';
  nameZone();
}

$('event-starts').addEventListener('input', function () {
  if (ctx) nameZone();
});

$('event-form').addEventListener('submit', function (event) {
  event.preventDefault();
  var station = ctx.station();
  var starts = isoFromZoned($('event-starts').value, zone());
  if (!starts) return ctx.say('When does the event start?', 'error');
  var announced = { kind: $('event-kind').value, starts_at: starts, ends_at: isoFromZoned($('event-ends').value, zone()), description: $('event-description').value };
  if (editing) {
    return api('PATCH', 'stations/' + segment(station.hrs_id) + '/events/' + segment(editing), announced).then(function (result) {
      if (result.status !== 200) return ctx.say(ctx.problemText(result), 'error');
      ctx.say('Event changed.', 'ok');
      resetEventForm();
      load(ctx);
    });
  }
  var broadcast = $('event-broadcast').checked;
  var path = broadcast ? 'operators/' + segment(station.operator) + '/events' : 'stations/' + segment(station.hrs_id) + '/events';
  api('POST', path, announced).then(function (result) {
    if (result.status !== 201) return ctx.say(ctx.problemText(result), 'error');
    ctx.say(broadcast ? 'Announced on ' + result.body.hrs_ids.join(', ') + '.' : 'Event announced.', 'ok');
    resetEventForm();
    load(ctx);
  });
});


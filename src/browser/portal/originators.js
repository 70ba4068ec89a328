// Originator managers' originators in the portal page: the list, and an originator's import tokens
// (a new one's value shown once, dropped when the view is left), the stations it reports on with their
// signals (timeline.js), its reliability figures and its call log. Every text from the API is set with
// textContent.
import { $, api, h } from './api.js';
import { pickList, problemText, say, segment, tell, when } from './registry-parts.js';
import { noCompleteHour, show as showTimeline } from './timeline.js';

var API = '/portal/v1/';
var originator = null; // id of the open originator
var callsNext = null;

var originatorMessage = $('originator-message');

export function loadOriginators() {
  api('GET', 'originators').then(function (result) {
    var items = result.status === 200 ? result.body.originators : [];
    pickList($('originator-list'), items, function (o) {
      return o.name + ' (' + o.id + ')';
    }, function (id) {
      openOriginator(id);
      tell('navigated', '/originators/' + segment(id));
    }, originator);
  });
}

export function closeOriginator() {
  originator = null;
  forgetImportValue();
  $('originator-detail').hidden = true;
  Array.prototype.forEach.call($('originator-list').querySelectorAll('button'), function (b) {
    b.removeAttribute('aria-current');
  });
}

export function openOriginator(id) {
  if (originator === id && !$('originator-detail').hidden) return;
  originator = id;
  forgetImportValue();
  say(originatorMessage, '');
  api('GET', 'originators/' + segment(id)).then(function (result) {
    if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
    if (originator !== id) return;
    $('originator-detail').hidden = false;
    $('originator-title').textContent = result.body.name + ' (' + result.body.id + ') · call log: ' + result.body.call_log_mode;
    Array.prototype.forEach.call($('originator-list').querySelectorAll('button'), function (b) {
      if (b.dataset.id === id) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    });
    $('originator-title').focus();
    var rows = $('reported-rows');
    rows.textContent = '';
    $('reported-signals').hidden = true;
    result.body.stations.forEach(function (s) {
      var states = Object.keys(s.assignments).map(function (type) {
        return type + ': ' + s.assignments[type];
      });
      var open = h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Signals of ' + s.hrs_id, text: 'Signals', onclick: function () {
        $('reported-signals').hidden = false;
        $('reported-signals-title').textContent = 'Signals of ' + s.hrs_id + ' · ' + s.name;
        showTimeline($('reported-signals-body'), 'originators/' + segment(id) + '/stations/' + segment(s.hrs_id) + '/');
        $('reported-signals-title').focus();
      } });
      rows.appendChild(h('tr', { 'data-hrs-id': s.hrs_id }, [h('td', { 'data-label': 'Station', text: s.hrs_id + ' · ' + s.name }), h('td', { 'data-label': 'Assignments', text: states.join(', ') }), h('td', {}, [open])]));
    });
    loadOriginatorFigures(id);
    loadImportTokens();
    callsNext = null;
    $('call-rows').textContent = '';
    loadCalls('originators/' + segment(id) + '/call-logs?limit=50');
  });
}

/** The originator's reliability: last signal, error rate, shares per category over its stations. */
function loadOriginatorFigures(id) {
  var box = $('originator-figures');
  box.textContent = '';
  api('GET', 'originators/' + segment(id) + '/reliability?period=7d').then(function (result) {
    var hour = 3600000;
    if (result.status === 503) return noCompleteHour(box, Math.floor(Date.now() / hour) * hour + hour);
    if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
    var f = result.body;
    // Signals received, none within a complete hour yet: the figures would read nothing but unknown.
    var counted = Object.keys(f.categories).some(function (key) {
      return f.categories[key].stations > 0;
    });
    if (f.last_signal_received !== null && !counted) return noCompleteHour(box, Date.parse(f.to) + hour);
    var pct = function (x) {
      return x === null ? '—' : (x * 100).toFixed(1) + ' %';
    };
    var rows = [
      h('tr', { 'data-figure': 'last-signal' }, [h('th', { scope: 'row', text: 'Last signal received' }), h('td', { text: when(f.last_signal_received) })]),
      h('tr', { 'data-figure': 'error-rate' }, [h('th', { scope: 'row', text: 'Import calls refused (7 days)' }), h('td', { text: f.calls.rejected + ' of ' + f.calls.total + ' · ' + pct(f.calls.error_rate) })]),
    ];
    Object.keys(f.categories).forEach(function (key) {
      var c = f.categories[key];
      if (c.stations === 0) return;
      rows.push(h('tr', { 'data-figure': key }, [
        h('th', { scope: 'row', text: key.replace('_', ' ') + ' (' + c.stations + ' stations)' }),
        h('td', { text: 'fresh ' + pct(c.shares.fresh) + ' · stale ' + pct(c.shares.stale) + ' · unknown ' + pct(c.shares.unknown) + ' · ' + c.gaps + ' gaps' }),
      ]));
    });
    box.appendChild(h('table', { class: 'grid-table' }, [h('tbody', {}, rows)]));
  });
}

function loadImportTokens() {
  api('GET', 'originators/' + segment(originator) + '/tokens').then(function (result) {
    var rows = $('import-rows');
    rows.textContent = '';
    if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
    result.body.tokens.forEach(function (token) {
      var revoke = token.state === 'active'
        ? h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Revoke ' + token.name, text: 'Revoke', onclick: function (event) {
            askRevoke(token, event.currentTarget);
          } })
        : null;
      rows.appendChild(h('tr', { 'data-state': token.state }, [
        h('td', { 'data-label': 'Name', text: token.name || '(no name)' }),
        h('td', { 'data-label': 'API', text: token.generation === 'import_v2' ? 'Import v2' : 'Import v1/v1.1' }),
        h('td', { 'data-label': 'Token', class: 'mono', text: token.hint ? '…' + token.hint : '—' }),
        h('td', { 'data-label': 'Expires', text: when(token.expires_at) }),
        h('td', { 'data-label': 'Last used', text: when(token.last_used_at) }),
        h('td', { 'data-label': 'State', text: token.state }),
        h('td', {}, [revoke]),
      ]));
    });
  });
}

export function forgetImportValue() {
  $('import-value').textContent = '';
  $('import-created').hidden = true;
}

$('import-form').addEventListener('submit', function (event) {
  event.preventDefault();
  var name = $('import-name').value.trim();
  if (!name) return say(originatorMessage, 'Give the token a name.', 'error');
  var expires = $('import-expires').value;
  var wanted = { generation: $('import-generation').value, name: name };
  if (expires) wanted.expires_at = new Date(expires + 'T12:00:00').toISOString();
  api('POST', 'originators/' + segment(originator) + '/tokens', wanted).then(function (result) {
    if (result.status !== 201) return say(originatorMessage, problemText(result), 'error');
    $('import-value').textContent = result.body.value;
    $('import-created').hidden = false;
    $('import-form').reset();
    say(originatorMessage, 'Token “' + result.body.token.name + '” created.', 'ok');
    loadImportTokens();
  });
});

$('import-copy').addEventListener('click', function () {
  var value = $('import-value').textContent;
  if (!navigator.clipboard) return say(originatorMessage, 'Select the value and copy it.', 'info');
  navigator.clipboard.writeText(value).then(
    function () {
      say(originatorMessage, 'Copied.', 'ok');
    },
    function () {
      say(originatorMessage, 'Copying was not allowed: select the value and copy it.', 'info');
    },
  );
});

$('import-done').addEventListener('click', forgetImportValue);

function loadCalls(path) {
  api('GET', path).then(function (result) {
    if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
    var list = $('call-rows');
    result.body.call_logs.forEach(function (c) {
      list.appendChild(callEntry(c));
    });
    if (list.children.length === 0) list.appendChild(h('li', { class: 'muted', text: 'No calls recorded (the call-log mode decides which are kept).' }));
    callsNext = result.body.next;
    $('calls-more').hidden = !callsNext;
  });
}

/**
 * One logged call: when, the answer's status, the endpoint, the stations it named and, for a refused
 * one, the first error and where it points; opened, the request's body (and the answer's, when kept).
 */
function callEntry(c) {
  var refused = c.status >= 400;
  var summary = h('summary', {}, [
    h('span', { class: 'muted', text: when(c.request_time) + ' · ' }),
    h('span', { class: refused ? 'call-status call-refused' : 'call-status', text: String(c.status) }),
    h('span', { text: ' · ' + c.endpoint }),
    c.station_ids.length > 0 ? h('span', { class: 'call-stations', text: ' · ' + c.station_ids.join(', ') }) : null,
    c.error ? h('span', { class: 'call-error', text: ' · ' + c.error.message + (c.error.path ? ' (' + c.error.path + ')' : '') }) : null,
  ]);
  var body = [h('p', { class: 'muted', text: 'Request ' + c.request_id + (c.client_address ? ' from ' + c.client_address : '') })];
  body.push(h('h4', { text: 'Request body' }), h('pre', { class: 'call-body', text: pretty(c.request_body) || '(empty)' }));
  if (c.response_body) body.push(h('h4', { text: 'Answer' }), h('pre', { class: 'call-body', text: pretty(c.response_body) }));
  return h('li', { 'data-status': String(c.status) }, [h('details', { class: 'call' }, [summary].concat(body))]);
}

/** JSON laid out for reading; anything else as it came. */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (err) {
    return text;
  }
}

// --- revoking an import token: a confirming step naming it and its last use -------------------------

var revokeDialog = $('import-revoke-dialog');
var revoking = null;
var revokeOpener = null;

/** Asks before revoking, naming the token and its last use as the platform knows them now (read again). */
function askRevoke(listed, opener) {
  api('GET', 'originators/' + segment(originator) + '/tokens').then(function (result) {
    var fresh = result.status === 200 ? result.body.tokens.filter(function (t) { return t.id === listed.id; })[0] : null;
    showRevoke(fresh || listed, opener);
  });
}

function showRevoke(token, opener) {
  revoking = token;
  revokeOpener = opener;
  $('import-revoke-text').textContent =
    '“' + (token.name || '(no name)') + '”' + (token.hint ? ' (…' + token.hint + ')' : '') +
    (token.last_used_at ? ', last used ' + when(token.last_used_at) : ', never used') +
    ', stops working at once: the monitoring system that sends with it gets 401 from its next call. This cannot be undone.';
  revokeDialog.showModal();
  $('import-revoke-cancel').focus();
}

$('import-revoke-cancel').addEventListener('click', function () {
  revokeDialog.close();
});

revokeDialog.addEventListener('close', function () {
  var opener = revokeOpener;
  revoking = null;
  revokeOpener = null;
  if (opener && opener.isConnected) opener.focus();
});

$('import-revoke-confirm').addEventListener('click', function () {
  var token = revoking;
  if (!token) return;
  revokeOpener = null;
  revokeDialog.close();
  api('POST', 'originators/' + segment(originator) + '/tokens/' + segment(token.id) + '/revoke').then(function (r) {
    if (r.status !== 200) return say(originatorMessage, problemText(r), 'error');
    say(originatorMessage, 'Token “' + token.name + '” revoked: it is refused from now on.', 'ok');
    loadImportTokens();
  });
});

$('calls-more').addEventListener('click', function () {
  if (callsNext) loadCalls(callsNext.replace(API, ''));
});

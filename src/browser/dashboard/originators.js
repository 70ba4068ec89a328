// The dashboard's originators panel: every signal originator with when it was last seen, its import
// calls and refused calls of the last 24 hours, its error rate, and its call log on demand, read from
// the admin API with the admin token this tab keeps (the same as the live feed's). Refreshed every 30 s
// while the feed is connected, and a few seconds after a refused call. Failing originators (the last
// call refused, or silent) come first, marked, and counted in a chip beside the stations' counts.
// Every text is set with textContent.
import { el, localTime as cellTime } from './cells.js';
import { ORIGINATOR_HEALTH_WORDS } from './vocabulary.js';

var TOKEN_KEY = 'hrs-admin-token';
var REFRESH_MS = 30000;
/** After a refused call: the call counts reach PostgreSQL within 5 s. */
var AFTER_REFUSAL_MS = 6000;
// Its own elements, looked up as each script of the dashboard and the portal looks up its own.
var $ = function (id) {
  return document.getElementById(id);
};
var els = {
  body: document.body,
  rows: $('originators'),
  error: $('originators-error'),
  log: $('call-log'),
  logTitle: $('call-log-title'),
  logEntries: $('call-log-entries'),
  logEmpty: $('call-log-empty'),
  logClose: $('call-log-close'),
  failing: $('failing-originators'),
  failingCount: $('count-failing'),
  failingLabel: $('failing-label'),
  title: $('originators-title'),
};
var timer = null;
var soon = null;

/** `2026-11-24 10:04:05 UTC+01:00`, in the browser's time zone (as the rest of the dashboard). */
function localTime(iso) {
  return (iso && cellTime(iso)) || '—';
}

function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch (e) {
    return null;
  }
}

function getJson(path) {
  var t = token();
  if (!t) return Promise.reject(new Error('signed out'));
  return fetch(path, { headers: { Authorization: 'Bearer ' + t }, cache: 'no-store' }).then(function (res) {
    return res.json().then(function (body) {
      if (!res.ok) throw new Error((body && body.detail) || 'HTTP ' + res.status);
      return body;
    });
  });
}

function percent(rate) {
  return rate === null || rate === undefined ? '—' : (rate * 100).toFixed(rate < 0.001 && rate > 0 ? 2 : 1) + ' %';
}

function failing(o) {
  return o.health === 'refused' || o.health === 'silent';
}

/** `12 min ago` */
function ago(iso) {
  var s = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  if (!(s >= 0)) return '';
  if (s < 120) return s + ' s ago';
  if (s < 7200) return Math.floor(s / 60) + ' min ago';
  if (s < 172800) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}

function health(o) {
  var td = el('td', 'health');
  var pill = el('span', 'health-pill health-' + o.health, ORIGINATOR_HEALTH_WORDS[o.health] || o.health || '—');
  td.appendChild(pill);
  if (o.health === 'silent') td.appendChild(el('span', 'station-name', 'last call ' + ago(o.last_seen)));
  if (o.health === 'refused') td.appendChild(el('span', 'station-name', ago(o.last_rejected)));
  return td;
}

function showFailing(count) {
  els.failing.hidden = count === 0;
  els.failingCount.textContent = String(count);
  els.failingLabel.textContent = count === 1 ? 'originator failing' : 'originators failing';
}

function render(list) {
  els.rows.textContent = '';
  // Failing first, each group as listed (by id).
  var bad = list.filter(failing);
  showFailing(bad.length);
  bad.concat(list.filter(function (o) { return !failing(o); })).forEach(function (o) {
    var tr = el('tr', failing(o) ? 'originator-failing' : '');
    tr.dataset.originator = o.id;
    tr.dataset.health = o.health || '';
    var head = el('th');
    head.scope = 'row';
    head.appendChild(el('span', 'station-id', o.id));
    head.appendChild(el('span', 'station-name', o.name + ' · call log: ' + o.call_log_mode));
    tr.appendChild(head);
    tr.appendChild(health(o));
    tr.appendChild(el('td', 'last-seen', localTime(o.last_seen)));
    tr.appendChild(el('td', 'calls', o.calls_24h));
    tr.appendChild(el('td', 'refused', o.rejected_24h));
    var rate = el('td', 'error-rate', percent(o.error_rate_24h));
    if (o.error_rate_24h >= 0.05) rate.classList.add('error-rate-high');
    tr.appendChild(rate);
    tr.appendChild(el('td', 'last-transmission', localTime(o.last_transmission)));
    var action = el('td');
    var button = el('button', 'button button-small button-ghost-dark', 'Show');
    button.type = 'button';
    button.setAttribute('aria-label', 'Show the call log of ' + o.id);
    button.addEventListener('click', function () {
      showLog(o.id);
    });
    action.appendChild(button);
    tr.appendChild(action);
    els.rows.appendChild(tr);
  });
}

function refresh() {
  getJson('/admin/v1/originators').then(
    function (body) {
      els.error.hidden = true;
      render(body.originators || []);
    },
    function (err) {
      els.error.textContent = 'Originators could not be read: ' + err.message;
      els.error.hidden = false;
    },
  );
}

function showLog(id) {
  els.log.hidden = false;
  els.log.dataset.originator = id;
  els.logTitle.textContent = 'Call log of ' + id + ' (newest first)';
  els.logEntries.textContent = '';
  els.logEmpty.hidden = true;
  getJson('/admin/v1/call-logs?originator=' + encodeURIComponent(id) + '&limit=20').then(
    function (body) {
      var entries = body.call_logs || [];
      els.logEmpty.hidden = entries.length > 0;
      entries.forEach(function (entry) {
        var li = el('li', 'tail-line' + (entry.status >= 400 ? ' tail-rejection' : ''));
        li.dataset.status = String(entry.status);
        li.appendChild(el('time', 'tail-time', localTime(entry.request_time)));
        li.appendChild(el('span', 'tail-station', (entry.station_ids || []).join(', ') || '—'));
        li.appendChild(el('span', 'tail-event', String(entry.status)));
        li.appendChild(el('span', 'tail-transition tail-detail', entry.endpoint));
        els.logEntries.appendChild(li);
      });
    },
    function (err) {
      els.logEmpty.textContent = 'The call log could not be read: ' + err.message;
      els.logEmpty.hidden = false;
    },
  );
}

els.logClose.addEventListener('click', function () {
  els.log.hidden = true;
});
els.failing.addEventListener('click', function () {
  els.title.scrollIntoView({ block: 'start' });
  els.title.focus();
});
document.addEventListener('hrs-rejection', function () {
  if (timer === null || soon !== null) return;
  soon = setTimeout(function () {
    soon = null;
    refresh();
  }, AFTER_REFUSAL_MS);
});

/** Polls while the live feed is connected. */
function follow() {
  var connected = els.body.dataset.connection === 'connected';
  if (connected && timer === null) {
    refresh();
    timer = setInterval(refresh, REFRESH_MS);
  } else if (!connected && timer !== null) {
    clearInterval(timer);
    timer = null;
  }
}
new MutationObserver(follow).observe(els.body, { attributes: true, attributeFilter: ['data-connection'] });
follow();

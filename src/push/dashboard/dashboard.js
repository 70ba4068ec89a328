// The admins' live dashboard: one WebSocket to /admin/v1/live, authenticated by its first message
// with the admin token kept in this tab's session storage. Every text from the feed is set with
// textContent; nothing is parsed as HTML.
(function () {
  'use strict';

  var TOKEN_KEY = 'hrs-admin-token';
  // The categories by section key, as the feed carries them; their one definition is src/domain/categories/.
  var CATEGORIES = ['availability', 'usage', 'hydrogen_storage', 'pricing'];
  var CATEGORY_LABELS = {
    availability: 'availability',
    usage: 'usage',
    hydrogen_storage: 'hydrogen storage',
    pricing: 'pricing',
  };
  var TAIL_LIMIT = 200;
  var HIGHLIGHT_MS = 2000;
  var BACKOFF_FIRST_MS = 500;
  var BACKOFF_MAX_MS = 10000;
  var CLOSE_UNAUTHORIZED = 4401;
  /** A connection not authenticated by then is given up and tried again. */
  var CONNECT_TIMEOUT_MS = 10000;

  // Its own elements, looked up as the portal's script (src/api/portal/page/portal.js) looks up its own:
  // the two pages share no script (each loads only its own files), so the three-line lookup stands in each.
  var $ = function (id) {
    return document.getElementById(id);
  };
  var els = {
    body: document.body,
    connectionText: $('connection-text'),
    signOut: $('sign-out'),
    login: $('login'),
    loginForm: $('login-form'),
    token: $('token'),
    loginError: $('login-error'),
    live: $('live'),
    stations: $('stations'),
    noStations: $('no-stations'),
    filter: $('filter'),
    tail: $('tail'),
    tailEmpty: $('tail-empty'),
    tailClear: $('tail-clear'),
    tailLimit: $('tail-limit'),
    timeZone: $('time-zone'),
    counts: {
      stations: $('count-stations'),
      available: $('count-available'),
      limited: $('count-limited'),
      unavailable: $('count-unavailable'),
      unknown: $('count-unknown'),
    },
  };

  /** hrs_id → { row, cells: { category → td }, name } */
  var rows = new Map();
  var socket = null;
  var retryTimer = null;
  var countdownTimer = null;
  var connectTimer = null;
  var backoffMs = BACKOFF_FIRST_MS;
  var retryAt = 0;

  // --- token ------------------------------------------------------------------------------------

  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null;
    }
  }

  function storeToken(token) {
    try {
      if (token === null) sessionStorage.removeItem(TOKEN_KEY);
      else sessionStorage.setItem(TOKEN_KEY, token);
    } catch (e) {
      /* storage unavailable: the token lives as long as the page */
    }
  }

  // --- connection state -------------------------------------------------------------------------

  function setState(state, text) {
    els.body.dataset.connection = state;
    els.connectionText.textContent = text;
    var signedIn = state !== 'signed-out' && state !== 'auth-failed';
    els.login.hidden = signedIn;
    els.live.hidden = !signedIn;
    els.signOut.hidden = !signedIn;
  }

  function showLoginError(text) {
    els.loginError.textContent = text;
    els.loginError.hidden = !text;
  }

  function stopTimers() {
    clearTimeout(retryTimer);
    clearInterval(countdownTimer);
    clearTimeout(connectTimer);
    retryTimer = null;
    countdownTimer = null;
    connectTimer = null;
  }

  function connect() {
    stopTimers();
    var token = storedToken();
    if (!token) {
      signedOut();
      return;
    }
    setState('connecting', 'connecting…');
    var url = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + '/admin/v1/live';
    var ws;
    try {
      ws = new WebSocket(url);
    } catch (e) {
      scheduleReconnect();
      return;
    }
    socket = ws;
    var lastError = '';
    connectTimer = setTimeout(function () {
      if (ws === socket && els.body.dataset.connection !== 'connected') ws.close();
    }, CONNECT_TIMEOUT_MS);
    ws.onopen = function () {
      ws.send(JSON.stringify({ type: 'auth', token: token }));
    };
    ws.onmessage = function (event) {
      if (ws !== socket) return;
      var message;
      try {
        message = JSON.parse(event.data);
      } catch (e) {
        return;
      }
      if (message && message.type === 'error') lastError = message.detail || message.code || '';
      handle(message);
    };
    ws.onclose = function (event) {
      if (ws !== socket) return;
      socket = null;
      if (event.code === CLOSE_UNAUTHORIZED) {
        authFailed(lastError);
        return;
      }
      scheduleReconnect();
    };
  }

  function scheduleReconnect() {
    stopTimers();
    var delay = backoffMs;
    backoffMs = Math.min(backoffMs * 2, BACKOFF_MAX_MS);
    retryAt = Date.now() + delay;
    var show = function () {
      var seconds = Math.max(0, (retryAt - Date.now()) / 1000);
      var text = seconds < 10 ? seconds.toFixed(1) : String(Math.round(seconds));
      setState('disconnected', 'disconnected — reconnecting in ' + text + ' s');
    };
    show();
    countdownTimer = setInterval(show, 100);
    retryTimer = setTimeout(connect, delay);
  }

  function closeSocket() {
    if (!socket) return;
    var ws = socket;
    socket = null;
    try {
      ws.close(1000, 'signed out');
    } catch (e) {
      /* already closing */
    }
  }

  function authFailed(detail) {
    stopTimers();
    closeSocket();
    storeToken(null);
    backoffMs = BACKOFF_FIRST_MS;
    setState('auth-failed', 'authentication failed');
    showLoginError('Authentication failed' + (detail ? ': ' + detail : '.') + ' Enter the admin token again.');
    els.token.value = '';
    els.token.focus();
  }

  function signedOut() {
    stopTimers();
    closeSocket();
    storeToken(null);
    backoffMs = BACKOFF_FIRST_MS;
    clearTable();
    clearTail();
    setState('signed-out', 'signed out');
    els.token.value = '';
    els.token.focus();
  }

  // --- messages ---------------------------------------------------------------------------------

  function handle(message) {
    if (!message || typeof message.type !== 'string') return;
    switch (message.type) {
      case 'authenticated':
        clearTimeout(connectTimer);
        backoffMs = BACKOFF_FIRST_MS;
        showLoginError('');
        setState('connected', 'connected');
        break;
      case 'snapshot':
        rebuild(Array.isArray(message.stations) ? message.stations : []);
        if (message.expiring_tokens !== undefined) expiringTokens(message.expiring_tokens);
        break;
      case 'expiring_tokens':
        expiringTokens(message.tokens);
        break;
      case 'change':
        applyChange(message);
        addTail(message);
        break;
      case 'receipt':
      case 'opening':
      case 'token':
      case 'rejection':
        addTail(message);
        break;
      case 'tail':
        // What happened lately on the server: the tail survives a reload (kept as it is when the server has nothing).
        if (Array.isArray(message.events) && message.events.length > 0) {
          clearTail();
          message.events.forEach(addTail);
        }
        break;
      case 'station':
        if (message.station) upsertRow(message.station);
        updateSummary();
        break;
      case 'removed':
        removeRow(message.hrs_id);
        break;
      case 'error':
        addTail(message);
        break;
    }
  }

  /** The tokens expiring soon, for their panel (expiring.js): `null` while the server has not read them yet. */
  function expiringTokens(list) {
    document.dispatchEvent(new CustomEvent('hrs-expiring-tokens', { detail: Array.isArray(list) ? list : null }));
  }

  // --- the table --------------------------------------------------------------------------------

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clearTable() {
    rows.forEach(function (entry) {
      entry.cells && Object.keys(entry.cells).forEach(function (c) {
        clearTimeout(entry.cells[c].highlightTimer);
      });
    });
    rows.clear();
    els.stations.textContent = '';
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
    var entry = { row: tr, cells: {}, name: station.name || '' };
    var sections = station.sections || {};
    CATEGORIES.forEach(function (category) {
      var td = el('td', 'cell');
      td.dataset.category = category;
      td.updates = 0;
      entry.cells[category] = td;
      renderCell(td, category, sections[category] || null);
      tr.appendChild(td);
    });
    var previous = rows.get(id);
    if (previous) {
      CATEGORIES.forEach(function (category) {
        clearTimeout(previous.cells[category].highlightTimer);
      });
      els.stations.replaceChild(tr, previous.row);
    } else {
      els.stations.insertBefore(tr, nextRowAfter(id));
    }
    rows.set(id, entry);
    showState(entry);
    applyFilterTo(entry);
  }

  /**
   * The station's state from its availability cell, as data users see it: unknown without a published
   * reading; unavailable in maintenance and limited when limitedly available, whatever the nozzles say;
   * otherwise available when some nozzle (or fuelling option) is.
   */
  function stationState(entry) {
    var view = entry.cells.availability.view;
    var section = view && view.freshness !== 'unknown' ? view.section : null;
    if (!section) return 'unknown';
    if (section.station && section.station.maintenance) return 'unavailable';
    if (section.station && section.station.limitedly_available) return 'limited';
    var some = function (list) {
      return Array.isArray(list) && list.some(function (x) { return x.available === true; });
    };
    return some(section.nozzles) || some(section.fuelling_options) ? 'available' : 'unavailable';
  }

  var STATE_LABELS = { available: 'available', limited: 'limitedly available', unavailable: 'unavailable', unknown: 'unknown' };

  function showState(entry) {
    var state = stationState(entry);
    entry.row.dataset.state = state;
    var node = entry.row.querySelector('.station-state');
    node.className = 'station-state state-pill state-' + state;
    node.textContent = STATE_LABELS[state];
  }

  /** The row before which a new station belongs (rows are sorted by hrs_id). */
  function nextRowAfter(id) {
    var children = els.stations.children;
    for (var i = 0; i < children.length; i++) {
      if (children[i].dataset.hrsId > id) return children[i];
    }
    return null;
  }

  function removeRow(id) {
    var entry = rows.get(id);
    if (!entry) return;
    CATEGORIES.forEach(function (category) {
      clearTimeout(entry.cells[category].highlightTimer);
    });
    entry.row.remove();
    rows.delete(id);
    updateSummary();
  }

  /** Fills a cell from a category view ({freshness, datetime, received_datetime, originator_id, section}) or null. */
  function renderCell(td, category, view) {
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

  function summarise(category, section) {
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
    if (message.category === 'availability') showState(entry);
    highlight(td);
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

  /** The header counts stations by state (see stationState), not readings. */
  function updateSummary() {
    var counts = { available: 0, limited: 0, unavailable: 0, unknown: 0 };
    rows.forEach(function (entry) {
      counts[entry.row.dataset.state || 'unknown']++;
    });
    els.counts.stations.textContent = String(rows.size);
    Object.keys(counts).forEach(function (state) {
      els.counts[state].textContent = String(counts[state]);
    });
    els.noStations.hidden = rows.size > 0 || els.body.dataset.connection !== 'connected';
  }

  // --- filter -----------------------------------------------------------------------------------

  function applyFilterTo(entry) {
    var q = els.filter.value.trim().toLowerCase();
    var id = entry.row.dataset.hrsId.toLowerCase();
    entry.row.hidden = q !== '' && id.indexOf(q) < 0 && entry.name.toLowerCase().indexOf(q) < 0;
  }

  // --- the tail ---------------------------------------------------------------------------------

  function clearTail() {
    els.tail.textContent = '';
    els.tailEmpty.hidden = false;
  }

  var TOKEN_EVENTS = { created: 'created', expiry_changed: 'expiry changed', revoked: 'revoked', expiring: 'expiring' };

  function addTail(message) {
    var li = el('li', 'tail-line tail-' + message.type);
    li.dataset.type = message.type;
    if (message.type === 'rejection') {
      message.hrs_id = Array.isArray(message.hrs_ids) && message.hrs_ids.length > 0 ? message.hrs_ids.join(', ') : '';
      message.category = categoryOf(message.endpoint);
    }
    if (message.hrs_id) li.dataset.hrsId = message.hrs_id;
    if (message.category) li.dataset.category = message.category;
    var at = message.at || new Date().toISOString();
    var time = el('time', 'tail-time', localTime(at));
    time.dateTime = at;
    li.appendChild(time);
    li.appendChild(el('span', 'tail-station', message.hrs_id || '—'));
    li.appendChild(el('span', 'tail-category', CATEGORY_LABELS[message.category] || message.category || ''));
    if (message.type === 'change') {
      li.appendChild(el('span', 'tail-event tail-cause-' + message.cause, message.cause));
      var transition = el('span', 'tail-transition');
      transition.appendChild(el('span', 'freshness-' + (message.previous || 'none'), message.previous || '—'));
      transition.appendChild(document.createTextNode(' → '));
      transition.appendChild(el('span', 'freshness-' + (message.freshness || 'none'), message.freshness || '—'));
      li.appendChild(transition);
      li.appendChild(el('span', 'tail-originator', message.originator_id || ''));
    } else if (message.type === 'opening') {
      li.appendChild(el('span', 'tail-event', message.open ? 'opens' : 'closes'));
      li.appendChild(el('span', 'tail-transition muted', 'by its opening hours'));
      li.appendChild(el('span', 'tail-originator', ''));
    } else if (message.type === 'token') {
      var label = TOKEN_EVENTS[message.kind] || message.kind;
      if (message.kind === 'revoked' && message.by) label += ' by ' + (message.by === 'admin' ? 'an admin' : 'its owner');
      if (message.kind === 'expiring' && message.days_before) label += ' · ' + message.days_before + '-day reminder';
      li.appendChild(el('span', 'tail-event tail-token-' + message.kind, 'token ' + label));
      var what = '"' + (message.name || '') + '"' + (message.hint ? ' …' + message.hint : '');
      li.appendChild(el('span', 'tail-transition', what + (message.expires_at ? ' · expires ' + localTime(message.expires_at) : '')));
      li.appendChild(el('span', 'tail-originator', message.user_id || ''));
    } else if (message.type === 'rejection') {
      li.appendChild(el('span', 'tail-event tail-rejected', 'refused · ' + message.status));
      var error = message.error ? (message.error.path ? message.error.path + ': ' : '') + message.error.message : 'no error given';
      li.appendChild(el('span', 'tail-transition tail-detail', error));
      li.appendChild(el('span', 'tail-originator', message.originator_id || ''));
      li.title = message.endpoint || '';
    } else if (message.type === 'receipt') {
      var via = message.source ? ' · ' + message.source.replace('import_', '') : '';
      li.appendChild(el('span', 'tail-event tail-assignment-' + message.assignment, 'receipt · ' + message.assignment + via));
      li.appendChild(el('span', 'tail-transition muted', 'not published'));
      li.appendChild(el('span', 'tail-originator', message.originator_id || ''));
    } else {
      li.appendChild(el('span', 'tail-event', 'error · ' + (message.code || '')));
      li.appendChild(el('span', 'tail-transition tail-detail', message.detail || ''));
      li.appendChild(el('span', 'tail-originator', ''));
    }
    if (message.datetime) li.title = 'measured ' + localTime(message.datetime) + (message.received_datetime ? '\nreceived ' + localTime(message.received_datetime) : '');
    els.tail.insertBefore(li, els.tail.firstChild);
    while (els.tail.children.length > TAIL_LIMIT) els.tail.removeChild(els.tail.lastChild);
    els.tailEmpty.hidden = true;
  }

  // --- time -------------------------------------------------------------------------------------

  var pad = function (n) {
    return (n < 10 ? '0' : '') + n;
  };

  /** The browser's offset from UTC at `d`, as `UTC+01:00`. */
  function zoneOf(d) {
    var minutes = -d.getTimezoneOffset();
    var sign = minutes < 0 ? '-' : '+';
    minutes = Math.abs(minutes);
    return 'UTC' + sign + pad(Math.floor(minutes / 60)) + ':' + pad(minutes % 60);
  }

  /**
   * Every time with its date and zone, in the browser's time zone: `2026-11-24 10:04:05 UTC+01:00`
   * (to the minute, `2026-11-24 10:04 UTC+01:00`, with `minutes`).
   */
  function localTime(iso, minutes) {
    var d = new Date(iso);
    if (isNaN(d.getTime())) return '';
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
      pad(d.getHours()) + ':' + pad(d.getMinutes()) + (minutes ? '' : ':' + pad(d.getSeconds())) + ' ' + zoneOf(d);
  }

  /** The signal category an import endpoint takes (`POST /import/v2/signal/usage/` → usage). */
  function categoryOf(endpoint) {
    var m = /\/signal\/([a-z-]+)\//.exec(endpoint || '');
    if (m) return m[1] === 'hydrogen-storage' ? 'hydrogen_storage' : m[1];
    return /hrs-availability/.test(endpoint || '') ? 'availability' : '';
  }

  function age(iso) {
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

  function refreshAges() {
    rows.forEach(function (entry) {
      CATEGORIES.forEach(function (category) {
        var td = entry.cells[category];
        if (!td.dataset.datetime) return;
        var node = td.querySelector('.age');
        if (node) node.textContent = age(td.dataset.datetime);
      });
    });
  }

  // --- wiring -----------------------------------------------------------------------------------

  els.tailLimit.textContent = String(TAIL_LIMIT);
  var zoneName = (Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time');
  els.timeZone.textContent = zoneName + ' (' + zoneOf(new Date()) + ')';
  els.loginForm.addEventListener('submit', function (event) {
    event.preventDefault();
    var token = els.token.value.trim();
    if (!token) return;
    storeToken(token);
    els.token.value = '';
    showLoginError('');
    backoffMs = BACKOFF_FIRST_MS;
    connect();
  });
  els.signOut.addEventListener('click', signedOut);
  els.tailClear.addEventListener('click', clearTail);
  els.filter.addEventListener('input', function () {
    rows.forEach(applyFilterTo);
  });
  window.addEventListener('online', function () {
    if (retryTimer) connect();
  });
  setInterval(refreshAges, 1000);

  // What the panels' scripts (loaded after this one) share with it.
  window.hrsDashboard = { el: el, localTime: localTime };

  if (storedToken()) connect();
  else setState('signed-out', 'signed out');
})();

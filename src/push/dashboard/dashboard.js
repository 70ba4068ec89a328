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
    sandboxStations: $('sandbox-stations'),
    sandbox: $('sandbox'),
    noStations: $('no-stations'),
    timeZone: $('time-zone'),
    counts: {
      stations: $('count-stations'),
      available: $('count-available'),
      limited: $('count-limited'),
      unavailable: $('count-unavailable'),
      unknown: $('count-unknown'),
      sandbox: $('count-sandbox'),
    },
  };

  /** hrs_id → { row, cells: { category → td }, name, sandbox } */
  var rows = new Map();
  // Filled in by the scripts loaded after this one (tail.js, filters.js), before any message arrives.
  var tail = { add: function () {}, clear: function () {} };
  var order = { place: function () {} };
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
    tail.clear();
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
        tail.add(message);
        break;
      case 'rejection':
        // The originators panel reads the figures again (originators.js).
        document.dispatchEvent(new CustomEvent('hrs-rejection'));
        tail.add(message);
        break;
      case 'receipt':
      case 'opening':
      case 'token':
        tail.add(message);
        break;
      case 'tail':
        // What happened lately on the server: the tail survives a reload (kept as it is when the server has nothing).
        if (Array.isArray(message.events) && message.events.length > 0) {
          tail.clear();
          message.events.forEach(tail.add);
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
        tail.add(message);
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
    var entry = { row: tr, cells: {}, name: station.name || '', sandbox: station.sandbox === true };
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
      previous.row.remove();
    }
    rows.set(id, entry);
    showState(entry);
    order.place(entry);
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

  /** The state on the row and its pill; a stale availability reading is said (it ranks with unknown ones). */
  function showState(entry) {
    var state = stationState(entry);
    var reading = entry.cells.availability.view;
    var stale = state !== 'unknown' && reading && reading.freshness === 'stale';
    entry.row.dataset.state = state;
    entry.row.dataset.stale = String(Boolean(stale));
    var node = entry.row.querySelector('.station-state');
    node.className = 'station-state state-pill state-' + state;
    node.textContent = STATE_LABELS[state] + (stale ? ' · stale' : '');
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
    if (message.category === 'availability') {
      showState(entry);
      order.place(entry);
    }
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

  /** The header counts stations by state (see stationState), not readings; the sandbox's are counted apart. */
  function updateSummary() {
    var counts = { available: 0, limited: 0, unavailable: 0, unknown: 0 };
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
  window.addEventListener('online', function () {
    if (retryTimer) connect();
  });
  setInterval(refreshAges, 1000);

  // What the panels' scripts (loaded after this one) share with it.
  window.hrsDashboard = {
    el: el,
    localTime: localTime,
    summarise: summarise,
    CATEGORY_LABELS: CATEGORY_LABELS,
    rows: rows,
    isSandbox: function (id) {
      var entry = rows.get(id);
      return entry !== undefined && entry.sandbox;
    },
    tail: tail,
    order: order,
  };

  if (storedToken()) connect();
  else setState('signed-out', 'signed out');
})();

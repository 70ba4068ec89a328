// The admins' live dashboard: one WebSocket to /admin/v1/live, authenticated by its first message
// with the admin token kept in this tab's session storage, reconnecting with backoff; its messages go
// to the stations table (stations.js), the tail (tail.js) and the panels (originators.js, expiring.js).
// Every text from the feed is set with textContent; nothing is parsed as HTML.
import { zoneOf } from './cells.js';
import * as table from './stations.js';
import * as tail from './tail.js';

var TOKEN_KEY = 'hrs-admin-token';
var BACKOFF_FIRST_MS = 500;
var BACKOFF_MAX_MS = 10000;
var CLOSE_UNAUTHORIZED = 4401;
var CLOSE_GOING_AWAY = 1001;
/** A connection not authenticated by then is given up and tried again. */
var CONNECT_TIMEOUT_MS = 10000;
// Its own elements, looked up as the portal's modules (src/browser/portal/api.js) look up theirs: the
// two pages share no module (each loads only its own files), so the three-line lookup stands in each.
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
  timeZone: $('time-zone'),
};

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
    // 1001: the server ended the stream (its maximum age, or a restart): back at once the first
    // time (the load balancer picks the instance), with the backoff only if that fails too.
    if (event.code === CLOSE_GOING_AWAY && backoffMs === BACKOFF_FIRST_MS) {
      backoffMs = Math.min(backoffMs * 2, BACKOFF_MAX_MS);
      connect();
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
  table.clear();
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
      table.rebuild(Array.isArray(message.stations) ? message.stations : []);
      if (message.expiring_tokens !== undefined) expiringTokens(message.expiring_tokens);
      break;
    case 'expiring_tokens':
      expiringTokens(message.tokens);
      break;
    case 'change':
      table.change(message);
      tail.add(message);
      break;
    case 'rejection':
      // The originators panel reads the figures again (originators.js).
      document.dispatchEvent(new CustomEvent('hrs-rejection'));
      tail.add(message);
      break;
    case 'opening':
      table.opening(message);
      tail.add(message);
      break;
    case 'receipt':
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
      if (message.station) table.upsert(message.station);
      table.summary();
      break;
    case 'removed':
      table.remove(message.hrs_id);
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

if (storedToken()) connect();
else setState('signed-out', 'signed out');

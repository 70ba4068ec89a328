// The portal page's addresses: every view has its own, in the fragment (`/portal/#/tokens`,
// `#/webhooks`, `#/webhooks/wh_…`, `#/stations`, `#/stations/BERLA`, `#/stations/BERLA/layout`, `#/originators`, `#/originators/o1`),
// so Back and Forward move between views, a reload returns to the view, and a view can be linked to.
// The sign-in and reveal links (`#sign-in=…`, `#reveal=…`) are session.js's and left alone here.
//
// The staff views (registry.js, stations.js, originators.js) say what the user opened ('hrs-portal:navigated', a path: a new history entry) and the
// account's roles once signed in ('hrs-portal:roles'; null when the page leaves the signed-in views);
// this module opens the views an address names through registry.js. Without an address, staff
// land on their stations, originator managers on their originators, everyone else on their tokens. An
// address opened while signed out is remembered in this browser for an hour and opened after signing in,
// also when the sign-in link is opened in another tab.
import * as registry from './registry.js';
import { leaveValue } from './session.js';
import { closeSubscription, openSubscription } from './webhooks.js';

var RETURN_KEY = 'hrs-portal:return';
var RETURN_MS = 60 * 60 * 1000;
var PANES = ['record', 'layout', 'events', 'photo', 'assignments', 'audit', 'signals'];
var TITLE = 'HRS portal';

var body = document.body;
/** The signed-in account's roles, or null. */
var roles = null;
/** The path the page shows. */
var current = null;

/** The route's path in an address's fragment ('#/stations/BERLA' → '/stations/BERLA'), or null. */
function routeOf(hash) {
  var m = /^#(\/[^#]*)$/.exec(hash || '');
  return m ? m[1] : null;
}

function decode(segment) {
  try {
    return decodeURIComponent(segment);
  } catch (e) {
    return null;
  }
}

/** A path as its parts: { space: 'tokens' | 'webhooks' | 'stations' | 'originators', id, pane }, or null when it names no view. */
function parse(path) {
  var parts = (path || '').split('/').slice(1);
  var space = parts[0];
  if (space === 'tokens' && parts.length === 1) return { space: space };
  if (space !== 'stations' && space !== 'originators' && space !== 'webhooks') return null;
  if (parts.length === 1) return { space: space };
  var id = decode(parts[1]);
  if (!id) return null;
  if (parts.length === 2) return { space: space, id: id };
  if (space === 'stations' && parts.length === 3 && PANES.indexOf(parts[2]) >= 0) return { space: space, id: id, pane: parts[2] };
  return null;
}

function staff() {
  return !!roles && (roles.admin || roles.operators.length > 0);
}

function manager() {
  return !!roles && (roles.admin || roles.originators.length > 0);
}

/** Where the account starts when the address names nothing it may open. */
function landing() {
  if (staff()) return '/stations';
  if (manager()) return '/originators';
  return '/tokens';
}

function allowed(route) {
  if (!route) return false;
  if (route.space === 'stations') return staff();
  if (route.space === 'originators') return manager();
  return true;
}

function setAddress(path, push) {
  var url = location.pathname + location.search + '#' + path;
  if (push) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}

/** Opens the view a (parsed, allowed) path names. */
function apply(path, route) {
  current = path;
  if (route.space === 'tokens') {
    registry.open('');
  } else if (route.space === 'webhooks') {
    registry.open('webhooks');
    if (route.id) openSubscription(route.id);
    else closeSubscription();
  } else if (route.space === 'stations') {
    registry.open('stations');
    if (route.id) registry.openStation(route.id, route.pane);
    else registry.closeStation();
  } else {
    registry.open('originators');
    if (route.id) registry.openOriginator(route.id);
    else registry.closeOriginator();
  }
  document.title = titleOf(route);
}

function titleOf(route) {
  var words = { tokens: 'API tokens', webhooks: 'Webhooks', stations: 'Stations', originators: 'Originators' }[route.space];
  var parts = [words];
  if (route.id) parts.unshift(route.id);
  if (route.pane) parts.unshift(route.pane.charAt(0).toUpperCase() + route.pane.slice(1));
  return parts.join(' · ') + ' · ' + TITLE;
}

/** Opens the path when the account may; else its landing view, the address corrected in place. */
function go(path) {
  var route = parse(path);
  if (!allowed(route)) {
    path = landing();
    route = parse(path);
    setAddress(path, false);
  }
  apply(path, route);
}

// --- the address to return to after signing in ----------------------------------------------------

function remember(path) {
  try {
    localStorage.setItem(RETURN_KEY, JSON.stringify({ path: path, at: Date.now() }));
  } catch (e) {
    /* no storage: the address is not kept */
  }
}

function takeRemembered() {
  try {
    var kept = JSON.parse(localStorage.getItem(RETURN_KEY) || 'null');
    localStorage.removeItem(RETURN_KEY);
    if (kept && typeof kept.path === 'string' && Date.now() - kept.at < RETURN_MS) return kept.path;
  } catch (e) {
    /* nothing kept */
  }
  return null;
}

function forget() {
  try {
    localStorage.removeItem(RETURN_KEY);
  } catch (e) {
    /* nothing kept */
  }
}

// --- events ------------------------------------------------------------------------------------------

document.addEventListener('hrs-portal:roles', function (event) {
  roles = event.detail || null;
  if (!roles) {
    current = null;
    document.title = TITLE;
    // Signed out on an address of a view: it is opened once signed in.
    var wanted = routeOf(location.hash);
    if (body.dataset.view === 'sign-in' && parse(wanted)) remember(wanted);
    return;
  }
  var path = routeOf(location.hash);
  if (!parse(path)) path = takeRemembered();
  else forget();
  if (!parse(path)) path = landing();
  setAddress(path, false);
  go(path);
});

document.addEventListener('hrs-portal:navigated', function (event) {
  var path = event.detail;
  if (path === current) return;
  var route = parse(path);
  if (!route) return;
  current = path;
  setAddress(path, true);
  document.title = titleOf(route);
});

window.addEventListener('hashchange', function () {
  var path = routeOf(location.hash);
  if (path === null) {
    // The address without a view (`/portal/`): the landing view, once signed in.
    if (roles && location.hash === '') go(landing());
    return;
  }
  if (path === current) return;
  if (!roles) {
    // A token's value on show, left by Back: the page goes to the tokens, then to this address.
    if (body.dataset.view === 'created') leaveValue();
    return;
  }
  go(path);
});

// A link within the page ("Skip to content") moves the focus without taking the view's address away.
document.addEventListener('click', function (event) {
  var link = event.target && event.target.closest ? event.target.closest('a[href^="#"]') : null;
  if (!link || routeOf(link.getAttribute('href'))) return;
  var target = document.getElementById(link.getAttribute('href').slice(1));
  if (!target) return;
  event.preventDefault();
  target.focus();
});

/** Signing out leaves no view's address behind (nor one to return to). */
document.addEventListener('hrs-signed-out', function () {
  forget();
  current = null;
  history.replaceState(null, '', location.pathname + location.search);
  document.title = TITLE;
});

// The Webhooks workspace of the portal page (every signed-in user's, beside the API tokens): the user's
// subscriptions (`#/webhooks`) with the form that adds one, and one subscription's view
// (`#/webhooks/wh_…`: its state, settings, re-enabling, secret rotation, a test ping, deletion, its last
// deliveries), through /portal/v1/webhooks. A signing secret is shown once, as a new token's value is
// (session.js): kept only in the page's text, and dropped when its view is left. The subscription's
// view and its deliveries are webhook-view.js's; the form's fields are webhook-form.js's. Every text
// from the API is set with textContent.
import { $, api, h, UNREACHABLE } from './api.js';
import { sessionEnded } from './session.js';
import { WEBHOOK_LIMIT as LIMIT } from './vocabulary.js';
import * as Form from './webhook-form.js';
import * as View from './webhook-view.js';

var dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

var subscriptions = [];
var addForm = Form.build($('webhook-add-form'), 'webhook-add', 'Add webhook');

// --- shared with webhook-view.js -------------------------------------------------------------------

function problemText(result) {
  if (result.status === 0) return UNREACHABLE;
  if (result.body && typeof result.body.detail === 'string' && result.body.detail) return result.body.detail;
  return 'Something went wrong (HTTP ' + result.status + '). Try again later.';
}

function say(el, text, kind) {
  el.textContent = text || '';
  el.dataset.kind = kind || 'info';
  el.hidden = !text;
}

/** A <time> in the browser's zone ('—' for none); `format`: a DateTimeFormat (medium date, short time unless given). */
function timeElement(iso, format) {
  var date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return document.createTextNode(iso ? String(iso) : '—');
  return h('time', { datetime: date.toISOString(), text: (format || dateTime).format(date) });
}

function when(iso) {
  return iso ? dateTime.format(new Date(iso)) : '';
}

/** The subscription's state in words: active (failing since …), disabled since … and why, unsubscribed by the receiver. */
function stateWords(sub) {
  if (sub.state === 'disabled') {
    return 'Disabled' + (sub.disabled_at ? ' since ' + when(sub.disabled_at) : '') + (sub.disabled_reason ? ': ' + sub.disabled_reason : '') +
      '. Nothing is sent until you re-enable it.';
  }
  if (sub.state === 'unsubscribed') {
    return 'Unsubscribed by the receiver: it answered 410 Gone' + (sub.disabled_at ? ' on ' + when(sub.disabled_at) : '') + '. Nothing is sent any more.';
  }
  if (sub.failing_since) return 'Active, but deliveries fail since ' + when(sub.failing_since) + ': they are retried, and the webhook is disabled if they keep failing.';
  return 'Active: changes are sent as they happen.';
}

/** The state as a pill with its words beside it. */
function stateElement(sub) {
  var label = { active: sub.failing_since ? 'failing' : 'active', disabled: 'disabled', unsubscribed: 'unsubscribed' }[sub.state] || sub.state;
  return h('span', { class: 'webhook-state' }, [
    // The words say it all: the pill is for the eye.
    h('span', { class: 'pill pill-' + (sub.failing_since && sub.state === 'active' ? 'failing' : sub.state), 'aria-hidden': 'true', text: label }),
    h('span', { class: 'state-words', text: ' ' + stateWords(sub) }),
  ]);
}

/** The stations and area a subscription is limited to, in words. */
function filterWords(sub) {
  var ids = sub.hrs_ids && sub.hrs_ids.length > 0 ? 'stations ' + sub.hrs_ids.join(', ') : 'every station';
  var area = sub.bbox ? ' in the area ' + sub.bbox.join(', ') : '';
  return ids + area;
}

/** Tells the router (router.js) the address of what the user opened. */
function navigated(path) {
  document.dispatchEvent(new CustomEvent('hrs-portal:navigated', { detail: path }));
}

/**
 * Whether an answer ends the section's work: 401 (the session ended: the sign-in page) or 503
 * `webhooks_not_configured` (the section says webhooks are not available here).
 */
function stopped(result) {
  if (result.status === 401) {
    sessionEnded();
    return true;
  }
  if (result.status === 503 && result.body && result.body.code === 'webhooks_not_configured') {
    unavailable(true);
    return true;
  }
  return false;
}

function unavailable(yes) {
  $('webhooks-unavailable').hidden = !yes;
  $('webhooks-list').hidden = yes;
  $('webhook-add').hidden = yes;
  if (yes) {
    $('webhooks-overview').hidden = false;
    $('webhook-detail').hidden = true;
  }
}

/** The subscription as listed now (after a change made in its view). */
function replace(sub) {
  var found = false;
  subscriptions = subscriptions.map(function (s) {
    if (s.id !== sub.id) return s;
    found = true;
    return sub;
  });
  if (!found) subscriptions.unshift(sub);
  render();
}

function remove(id) {
  subscriptions = subscriptions.filter(function (s) {
    return s.id !== id;
  });
  render();
}

// --- the list ----------------------------------------------------------------------------------------

function load() {
  return api('GET', 'webhooks').then(function (result) {
    if (stopped(result)) return;
    if (result.status !== 200 || !result.body || !Array.isArray(result.body.webhooks)) {
      say($('webhooks-message'), 'Your webhooks could not be loaded: ' + problemText(result), 'error');
      return;
    }
    unavailable(false);
    subscriptions = result.body.webhooks;
    render();
  });
}

function counted() {
  return subscriptions.filter(function (s) {
    return s.state !== 'unsubscribed';
  }).length;
}

function render() {
  var rows = $('webhook-rows');
  rows.textContent = '';
  subscriptions.forEach(function (sub) {
    var endpoint = h('th', { scope: 'row', class: 'webhook-endpoint' }, [
      h('a', { href: '#/webhooks/' + encodeURIComponent(sub.id), class: 'mono', text: sub.url }),
      sub.description ? h('span', { class: 'help', text: sub.description }) : null,
    ]);
    rows.appendChild(h('tr', { 'data-webhook-id': sub.id, 'data-state': sub.state }, [
      endpoint,
      h('td', { 'data-label': 'Changes' }, [document.createTextNode(Form.kindWords(sub.kinds)), h('span', { class: 'help', text: 'For ' + filterWords(sub) })]),
      h('td', { 'data-label': 'State' }, [stateElement(sub)]),
      h('td', { 'data-label': 'Last delivered' }, [sub.last_delivery_at ? timeElement(sub.last_delivery_at) : document.createTextNode('not yet')]),
    ]));
  });
  $('webhooks-table').hidden = subscriptions.length === 0;
  $('no-webhooks').hidden = subscriptions.length > 0;
  var n = counted();
  $('webhooks-count').textContent = 'You have ' + n + ' of ' + LIMIT + ' webhooks' +
    (n >= LIMIT ? ': delete one before adding another.' : '.') + ' Those the receiver unsubscribed do not count.';
}

// --- adding one --------------------------------------------------------------------------------------

$('webhook-add-form').addEventListener('submit', function (event) {
  event.preventDefault();
  say($('webhooks-message'), '');
  var read = addForm.read();
  if (read.field) return addForm.refuse(read.field, read.problem);
  addForm.submit.disabled = true;
  api('POST', 'webhooks', read.value)
    .then(function (result) {
      var body = result.body;
      if (result.status === 201 && body && body.id && typeof body.secret === 'string') {
        var secret = body.secret;
        body.secret = null;
        delete body.secret;
        replace(body);
        addForm.fill(null);
        View.show(body, { secret: secret, created: true });
        navigated('/webhooks/' + encodeURIComponent(body.id));
        return;
      }
      if (stopped(result)) return;
      addForm.showProblems(result, 'The webhook was not added: ' + problemText(result));
    })
    .finally(function () {
      addForm.submit.disabled = false;
    });
});

// --- the router's and the registry's calls -----------------------------------------------------------

/** Opens the workspace on the list (and reads the list again). */
export function show() {
  $('webhooks-overview').hidden = false;
  return load();
}

/** The workspace left (another one opened, or signed out): a secret on show is dropped. */
export function leave() {
  View.close();
  say($('webhooks-message'), '');
  if (document.body.dataset.view !== 'tokens') {
    subscriptions = [];
    render();
    addForm.fill(null);
  }
}

/** One subscription's view, from its address. */
export function openSubscription(id) {
  View.open(id);
}

/** Back to the list, from a subscription's view. */
export function closeSubscription() {
  var wasOpen = !$('webhook-detail').hidden;
  View.close();
  $('webhooks-overview').hidden = false;
  if (wasOpen) $('webhooks-title').focus();
}

// For webhook-view.js: the helpers and the list it keeps in step.
export { problemText, say, timeElement, stateElement, stopped, navigated, replace, remove };

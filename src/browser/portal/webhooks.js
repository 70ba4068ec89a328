// The Webhooks workspace of the portal page (every signed-in user's, beside the API tokens): the user's
// subscriptions (`#/webhooks`) with the form that adds one, and one subscription's view
// (`#/webhooks/wh_…`: its state, settings, re-enabling, secret rotation, a test ping, deletion, its last
// deliveries), through /portal/v1/webhooks. A signing secret is shown once, as a new token's value is
// (value.js): kept only in the page's text, and dropped when its view is left. The subscription's
// view and its deliveries are webhook-view.js's; the form's fields are webhook-form.js's; what both
// use, webhook-common.js's. Every text
// from the API is set with textContent.
import { $, api, h } from './api.js';
import { WEBHOOK_LIMIT as LIMIT } from './vocabulary.js';
import { navigated, problemText, say, stateElement, stopped, timeElement, unavailable } from './webhook-common.js';
import * as Form from './webhook-form.js';
import * as View from './webhook-view.js';

var subscriptions = [];
var addForm = Form.build($('webhook-add-form'), 'webhook-add', 'Add webhook');

/** The stations and area a subscription is limited to, in words. */
function filterWords(sub) {
  var ids = sub.hrs_ids && sub.hrs_ids.length > 0 ? 'stations ' + sub.hrs_ids.join(', ') : 'every station';
  var area = sub.bbox ? ' in the area ' + sub.bbox.join(', ') : '';
  return ids + area;
}

/** The subscription as listed now (after one is added, or changed in its view: 'hrs-portal:webhook-changed'). */
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

/** A subscription deleted in its view ('hrs-portal:webhook-deleted'): gone from the list. */
function remove(id) {
  subscriptions = subscriptions.filter(function (s) {
    return s.id !== id;
  });
  render();
}

// webhook-view.js says what it changed; the list keeps in step.
document.addEventListener('hrs-portal:webhook-changed', function (event) {
  replace(event.detail);
});
document.addEventListener('hrs-portal:webhook-deleted', function (event) {
  remove(event.detail);
});

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
export { closeSubscription } from './webhook-view.js';

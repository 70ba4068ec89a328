// One webhook subscription's view in the portal page's Webhooks workspace (`#/webhooks/wh_…`, opened by
// webhooks.js): its state in words, its settings as a form to change, re-enabling a disabled one,
// rotating its signing secret, a test ping, deleting it (after a confirming dialog, as revoking a token),
// and its last 100 deliveries (read again after a ping until the ping's shows). A signing secret (a new
// subscription's, or a rotated one) is shown once with a copy button, as a token's value is, and removed
// from the page when the view is left or "Done" is pressed. What it changes it announces to the list
// (webhooks.js) as 'hrs-portal:webhook-changed' (the subscription) and 'hrs-portal:webhook-deleted' (its id).
import { $, api, h } from './api.js';
import { build } from './webhook-form.js';
import { navigated, problemText, say, stateElement, stopped, timeElement } from './webhook-common.js';

/** Deliveries are told apart by the second. */
var precise = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** After a ping, the deliveries are read again this often, until the ping's shows or the tries run out. */
var PING_POLL_MS = 1000;
var PING_POLL_TRIES = 15;

var message = $('webhook-detail-message');
var editForm = build($('webhook-edit-form'), 'webhook-edit', 'Save settings');
var sub = null; // the subscription on show
var wanted = null; // the id asked for last (its answer may still be on its way)
var poll = null; // { timer, messageId, tries }

function path(suffix) {
  return 'webhooks/' + encodeURIComponent(sub.id) + (suffix || '');
}

// --- showing one -------------------------------------------------------------------------------------

/** Opens the subscription with this id (read from the API); the focus goes to its title. */
function open(id) {
  if (sub && sub.id === id && !$('webhook-detail').hidden) return;
  close();
  wanted = id;
  $('webhooks-overview').hidden = true;
  $('webhook-detail').hidden = false;
  $('webhook-body').hidden = true;
  $('webhook-title').textContent = 'Webhook ' + id;
  $('webhook-title').focus();
  api('GET', 'webhooks/' + encodeURIComponent(id)).then(function (result) {
    if (wanted !== id) return;
    if (stopped(result)) return;
    if (result.status !== 200 || !result.body) {
      say(message, result.status === 404 ? 'You have no webhook ' + id + ': it was deleted, or the address is mistyped.' : problemText(result), 'error');
      return;
    }
    show(result.body, {});
  });
}

/**
 * Shows a subscription as the API gave it; `extra.secret`: a signing secret to show once (a new
 * subscription's: `extra.created`).
 */
function show(next, extra) {
  var same = sub && sub.id === next.id;
  if (!same) close();
  sub = next;
  wanted = next.id;
  $('webhooks-overview').hidden = true;
  $('webhook-detail').hidden = false;
  $('webhook-body').hidden = false;
  $('webhook-title').textContent = next.url;
  $('webhook-state').textContent = '';
  $('webhook-state').appendChild(stateElement(next));
  facts(next);
  $('webhook-enable').hidden = next.state !== 'disabled';
  $('webhook-ping').disabled = next.state !== 'active';
  editForm.fill(next);
  if (!same) loadDeliveries();
  if (extra && extra.secret) showSecret(extra.secret, extra.created ? null : extra.validUntil, extra.created);
  else if (!same) $('webhook-title').focus();
}

function facts(s) {
  var list = $('webhook-facts');
  list.textContent = '';
  var fact = function (term, value) {
    list.appendChild(h('div', {}, [h('dt', { text: term }), h('dd', {}, [typeof value === 'string' ? document.createTextNode(value) : value])]));
  };
  fact('Id', h('span', { class: 'mono', text: s.id }));
  fact('Created', timeElement(s.created_at));
  fact('Changes last delivered', s.last_delivery_at ? timeElement(s.last_delivery_at) : 'not yet');
  fact('Secret rotated', s.secret_rotated_at ? timeElement(s.secret_rotated_at) : 'never');
  if (s.previous_secret_valid_until && Date.parse(s.previous_secret_valid_until) > Date.now()) fact('Old secret signs until', timeElement(s.previous_secret_valid_until));
}

/** Leaves the subscription's view: the secret on show is dropped, the ping's polling stopped. */
function close() {
  forgetSecret();
  stopPolling();
  sub = null;
  wanted = null;
  say(message, '');
  editForm.clear();
  $('webhook-detail').hidden = true;
  $('delivery-rows').textContent = '';
}

/** Back to the list, from a subscription's view (the focus on the list's title if the view was open). */
function closeSubscription() {
  var wasOpen = !$('webhook-detail').hidden;
  close();
  $('webhooks-overview').hidden = false;
  if (wasOpen) $('webhooks-title').focus();
}

/** Tells the list (webhooks.js) a subscription as it is now. */
function listed(next) {
  document.dispatchEvent(new CustomEvent('hrs-portal:webhook-changed', { detail: next }));
}

// --- the secret, shown once ---------------------------------------------------------------------------

function showSecret(value, validUntil, created) {
  $('webhook-secret-title').textContent = created ? 'The new webhook’s signing secret' : 'The new signing secret';
  $('webhook-secret-value').textContent = value;
  var overlap = $('webhook-secret-overlap');
  overlap.textContent = '';
  if (validUntil) overlap.append('Until ', timeElement(validUntil), ' every message is signed with the old secret too, so your receiver can switch over meanwhile.');
  overlap.hidden = !validUntil;
  say($('webhook-secret-message'), '');
  $('webhook-secret').hidden = false;
  $('webhook-secret-title').focus();
}

/** Removes the secret from the page: the only place it was kept. */
function forgetSecret() {
  var value = $('webhook-secret-value');
  var selection = window.getSelection();
  if (selection && value.contains(selection.anchorNode)) selection.removeAllRanges();
  value.textContent = '';
  $('webhook-secret-overlap').textContent = '';
  say($('webhook-secret-message'), '');
  $('webhook-secret').hidden = true;
}

function selectSecret() {
  var selection = window.getSelection();
  if (!selection) return;
  var range = document.createRange();
  range.selectNodeContents($('webhook-secret-value'));
  selection.removeAllRanges();
  selection.addRange(range);
}

$('webhook-secret-value').addEventListener('click', selectSecret);

$('webhook-secret-copy').addEventListener('click', function () {
  var value = $('webhook-secret-value').textContent;
  if (!value) return;
  var selected = function () {
    selectSecret();
    say($('webhook-secret-message'), 'The secret is selected: copy it with Ctrl+C (⌘C on a Mac) or your device’s Copy.', 'info');
  };
  if (!navigator.clipboard || typeof navigator.clipboard.writeText !== 'function') return selected();
  navigator.clipboard.writeText(value).then(function () {
    say($('webhook-secret-message'), 'Copied to the clipboard.', 'ok');
  }, selected);
});

$('webhook-secret-done').addEventListener('click', function () {
  forgetSecret();
  $('webhook-title').focus();
});

// --- changing it ---------------------------------------------------------------------------------------

/** A call about the open subscription; `done(result)` when it is still the one on show. */
function call(method, suffix, payload, button, done) {
  var id = sub.id;
  say(message, '');
  if (button) button.disabled = true;
  return api(method, path(suffix), payload)
    .then(function (result) {
      if (!sub || sub.id !== id || stopped(result)) return;
      done(result);
    })
    .finally(function () {
      if (button) button.disabled = false;
      if (sub && button === $('webhook-ping')) button.disabled = sub.state !== 'active';
    });
}

function changed(result, words) {
  listed(result.body);
  show(result.body, {});
  say(message, words, 'ok');
}

/**
 * The fields the form changes, alone (an unchanged URL is not checked again: its host may not resolve
 * at this moment, and saving a description should not depend on it).
 */
function changes(value) {
  var patch = {};
  Object.keys(value).forEach(function (field) {
    if (JSON.stringify(value[field]) !== JSON.stringify(sub[field])) patch[field] = value[field];
  });
  return patch;
}

$('webhook-edit-form').addEventListener('submit', function (event) {
  event.preventDefault();
  var read = editForm.read();
  if (read.field) return editForm.refuse(read.field, read.problem);
  var patch = changes(read.value);
  if (Object.keys(patch).length === 0) return editForm.say('Nothing to save: the settings are as they were.', 'info');
  call('PATCH', '', patch, editForm.submit, function (result) {
    if (result.status === 200 && result.body && result.body.id) {
      changed(result, 'Settings saved.');
      editForm.say('Settings saved.', 'ok');
      return;
    }
    editForm.showProblems(result, 'The settings were not saved: ' + problemText(result));
  });
});

$('webhook-enable').addEventListener('click', function () {
  call('PATCH', '', { state: 'active' }, $('webhook-enable'), function (result) {
    if (result.status !== 200 || !result.body || !result.body.id) return say(message, 'Re-enabling failed: ' + problemText(result), 'error');
    changed(result, 'Re-enabled: delivery resumes with the first change not yet delivered.');
    $('webhook-ping').focus();
  });
});

$('webhook-rotate').addEventListener('click', function () {
  call('POST', '/rotate-secret', undefined, $('webhook-rotate'), function (result) {
    var body = result.body;
    if (result.status !== 200 || !body || typeof body.secret !== 'string') return say(message, 'Rotating the secret failed: ' + problemText(result), 'error');
    var secret = body.secret;
    var until = body.previous_secret_valid_until;
    body.secret = null;
    showSecret(secret, until, false);
    api('GET', path()).then(function (again) {
      if (again.status === 200 && again.body && sub && again.body.id === sub.id) {
        listed(again.body);
        $('webhook-state').textContent = '';
        $('webhook-state').appendChild(stateElement(again.body));
        sub = again.body;
        facts(again.body);
      }
    });
  });
});

$('webhook-ping').addEventListener('click', function () {
  call('POST', '/ping', undefined, $('webhook-ping'), function (result) {
    if (result.status !== 202 || !result.body || !result.body.message_id) return say(message, 'The test ping was not sent: ' + problemText(result), 'error');
    var id = result.body.message_id;
    say(message, 'Test ping ' + id + ' is on its way; its delivery shows in the table below once made.', 'ok');
    stopPolling();
    poll = { messageId: id, tries: 0, timer: null };
    loadDeliveries();
  });
});

// --- deleting it -----------------------------------------------------------------------------------------

var dialog = $('webhook-delete-dialog');

$('webhook-delete').addEventListener('click', function () {
  $('webhook-delete-text').textContent = 'The platform stops sending to ' + sub.url + ' at once and forgets this webhook, its secret and its deliveries. This cannot be undone.';
  dialog.showModal();
  $('webhook-delete-cancel').focus();
});

$('webhook-delete-cancel').addEventListener('click', function () {
  dialog.close();
});

dialog.addEventListener('close', function () {
  $('webhook-delete-confirm').disabled = false;
  if (sub) $('webhook-delete').focus();
});

$('webhook-delete-confirm').addEventListener('click', function () {
  if (!sub) return dialog.close();
  var gone = sub;
  call('DELETE', '', undefined, $('webhook-delete-confirm'), function (result) {
    if (result.status !== 204) {
      dialog.close();
      return say(message, 'Deleting failed: ' + problemText(result), 'error');
    }
    dialog.close();
    document.dispatchEvent(new CustomEvent('hrs-portal:webhook-deleted', { detail: gone.id }));
    closeSubscription();
    navigated('/webhooks');
    say($('webhooks-message'), 'The webhook to ' + gone.url + ' is deleted.', 'ok');
  });
});

// --- its deliveries --------------------------------------------------------------------------------------

function stopPolling() {
  if (poll && poll.timer) clearTimeout(poll.timer);
  poll = null;
}

function resultWords(d) {
  var code = d.status_code === null || d.status_code === undefined ? '' : 'HTTP ' + d.status_code;
  if (d.error) return code ? code + ': ' + d.error : d.error;
  return code || '—';
}

function loadDeliveries() {
  var id = sub.id;
  return api('GET', path('/deliveries')).then(function (result) {
    if (!sub || sub.id !== id || stopped(result)) return;
    if (result.status !== 200 || !result.body || !Array.isArray(result.body.deliveries)) {
      return say(message, 'The deliveries could not be loaded: ' + problemText(result), 'error');
    }
    var deliveries = result.body.deliveries;
    var rows = $('delivery-rows');
    rows.textContent = '';
    deliveries.forEach(function (d) {
      var ok = typeof d.status_code === 'number' && d.status_code >= 200 && d.status_code < 300 && !d.error;
      rows.appendChild(h('tr', { 'data-message-id': d.message_id, 'data-ok': String(ok) }, [
        h('td', { 'data-label': 'Time' }, [timeElement(d.at, precise)]),
        h('td', { 'data-label': 'Message', class: 'mono', text: d.message_id }),
        h('td', { 'data-label': 'Kind', text: d.kind === 'ping' ? 'test ping' : d.changes + (d.changes === 1 ? ' change' : ' changes') }),
        h('td', { 'data-label': 'Attempt', text: String(d.attempt) }),
        h('td', { 'data-label': 'Result', class: ok ? 'delivery-ok' : 'delivery-failed', text: resultWords(d) }),
        h('td', { 'data-label': 'Latency', text: typeof d.latency_ms === 'number' ? d.latency_ms + ' ms' : '—' }),
      ]));
    });
    $('deliveries-table').hidden = deliveries.length === 0;
    $('no-deliveries').hidden = deliveries.length > 0;
    if (!poll) return;
    var arrived = deliveries.some(function (d) {
      return d.message_id === poll.messageId;
    });
    if (arrived) {
      say(message, 'Test ping ' + poll.messageId + ' delivered: see its result below.', 'ok');
      stopPolling();
    } else if (++poll.tries >= PING_POLL_TRIES) {
      say(message, 'Test ping ' + poll.messageId + ' is queued but not delivered yet. Press “Refresh” to look again.', 'info');
      stopPolling();
    } else {
      poll.timer = setTimeout(loadDeliveries, PING_POLL_MS);
    }
  });
}

$('deliveries-refresh').addEventListener('click', function () {
  if (sub) loadDeliveries();
});

export { open, show, close, closeSubscription };

// What the portal page's two webhook modules share (webhooks.js, the list and the form that adds one;
// webhook-view.js, one subscription's view): answers in words, a subscription's state and times as
// elements, telling the router where the user went, and the answers that end the workspace's work.
import { $, h, UNREACHABLE } from './api.js';
import { sessionEnded } from './account.js';

var dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function problemText(result) {
  if (result.status === 0) return UNREACHABLE;
  if (result.body && typeof result.body.detail === 'string' && result.body.detail) return result.body.detail;
  return 'Something went wrong (HTTP ' + result.status + '). Try again later.';
}

export function say(el, text, kind) {
  el.textContent = text || '';
  el.dataset.kind = kind || 'info';
  el.hidden = !text;
}

/** A <time> in the browser's zone ('—' for none); `format`: a DateTimeFormat (medium date, short time unless given). */
export function timeElement(iso, format) {
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
export function stateElement(sub) {
  var label = { active: sub.failing_since ? 'failing' : 'active', disabled: 'disabled', unsubscribed: 'unsubscribed' }[sub.state] || sub.state;
  return h('span', { class: 'webhook-state' }, [
    // The words say it all: the pill is for the eye.
    h('span', { class: 'pill pill-' + (sub.failing_since && sub.state === 'active' ? 'failing' : sub.state), 'aria-hidden': 'true', text: label }),
    h('span', { class: 'state-words', text: ' ' + stateWords(sub) }),
  ]);
}

/** Tells the router (router.js) the address of what the user opened. */
export function navigated(path) {
  document.dispatchEvent(new CustomEvent('hrs-portal:navigated', { detail: path }));
}

/**
 * Whether an answer ends the section's work: 401 (the session ended: the sign-in page) or 503
 * `webhooks_not_configured` (the section says webhooks are not available here).
 */
export function stopped(result) {
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

/** Whether the workspace says webhooks are not available here (instead of the list and the form). */
export function unavailable(yes) {
  $('webhooks-unavailable').hidden = !yes;
  $('webhooks-list').hidden = yes;
  $('webhook-add').hidden = yes;
  if (yes) {
    $('webhooks-overview').hidden = false;
    $('webhook-detail').hidden = true;
  }
}

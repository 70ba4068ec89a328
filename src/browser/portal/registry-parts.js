// What the portal page's staff views (registry.js, stations.js, originators.js) share: a refusal in
// words, a message beside a form, an instant in words, an id in an API path, a pick list, and telling
// the router (router.js) what the user opened.
import { h, UNREACHABLE } from './api.js';

// The viewer's zone, always named ("5 Dec 2026, 04:58 CET"): an account's and an originator's times.
var dateTime = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });

/** A number typed in the field with this id: the number, undefined when empty, NaN when it is not one (a decimal comma taken). */
export function numberIn(id) {
  var text = document.getElementById(id).value.trim().replace(',', '.');
  if (text === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
}

export function problemText(result) {
  if (result.status === 0) return UNREACHABLE;
  if (result.body && typeof result.body.detail === 'string') return result.body.detail;
  return 'Something went wrong (HTTP ' + result.status + '). Try again later.';
}

export function say(el, text, kind) {
  el.textContent = text || '';
  el.dataset.kind = kind || 'info';
  el.hidden = !text;
}

export function when(iso) {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function segment(id) {
  return encodeURIComponent(id);
}

/**
 * Tells the page's router (router.js) what the user opened, as the address's path ('/stations/BERLA/layout'),
 * or the roles once known (null: signed out); the router gives each view its address.
 */
export function tell(name, detail) {
  document.dispatchEvent(new CustomEvent('hrs-portal:' + name, { detail: detail }));
}

export function pickList(list, items, label, onPick, selected) {
  list.textContent = '';
  items.forEach(function (item) {
    var button = h('button', { type: 'button', class: 'pick', 'data-id': item.id, 'data-state': item.state || null, 'aria-current': item.id === selected ? 'true' : null }, [
      h('span', { class: 'pick-label', text: label(item) }),
      item.note ? h('span', { class: 'pick-note', text: item.note }) : null,
    ]);
    button.addEventListener('click', function () {
      Array.prototype.forEach.call(list.querySelectorAll('button'), function (b) {
        b.removeAttribute('aria-current');
      });
      button.setAttribute('aria-current', 'true');
      onPick(item.id);
    });
    list.appendChild(h('li', {}, [button]));
  });
}

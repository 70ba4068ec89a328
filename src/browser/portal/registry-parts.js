// What the portal page's staff views (registry.js, stations.js, originators.js) share: a refusal in
// words, a message beside a form, an instant in words, an id in an API path, a pick list, and telling
// the router (router.js) what the user opened.
import { h, UNREACHABLE } from './api.js';

var dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

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
    var button = h('button', { type: 'button', class: 'pick', 'data-id': item.id, 'aria-current': item.id === selected ? 'true' : null, text: label(item) });
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

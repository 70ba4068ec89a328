// The dashboard's panel of tokens expiring soon: every token (import, legacy export, personal) that
// expires within 30 days, neither revoked nor of a deactivated owner, soonest first, as the live feed
// sends it (in the snapshot, and an `expiring_tokens` message whenever the list changes). dashboard.js
// hands each list over as an `hrs-expiring-tokens` event. Every text is set with textContent; never a
// token's value (the feed has none).
import { el, localTime as cellTime } from './cells.js';
import { TOKEN_KIND_WORDS } from './vocabulary.js';

var DAY_MS = 86400000;
var rows = document.getElementById('expiring');
var status = document.getElementById('expiring-status');

/** `2026-11-24 10:04 UTC+01:00`, in the browser's time zone (as the rest of the dashboard). */
function localTime(iso) {
  return cellTime(iso, true) || '—';
}

function left(iso) {
  var ms = new Date(iso).getTime() - Date.now();
  if (!(ms > 0)) return 'expired';
  if (ms < DAY_MS) return 'within a day';
  var days = Math.round(ms / DAY_MS);
  return 'in ' + days + (days === 1 ? ' day' : ' days');
}

function render(list) {
  rows.textContent = '';
  if (list === null) {
    status.textContent = 'Reading the tokens…';
    status.hidden = false;
    return;
  }
  status.textContent = list.length === 0 ? 'No token expires within 30 days.' : list.length + (list.length === 1 ? ' token expires' : ' tokens expire') + ' within 30 days.';
  status.hidden = false;
  list.forEach(function (token) {
    var tr = el('tr');
    tr.dataset.tokenId = token.id;
    tr.dataset.kind = token.kind;
    var head = el('th');
    head.scope = 'row';
    head.appendChild(el('span', 'station-id', token.name || 'token ' + token.id));
    head.appendChild(el('span', 'station-name', (token.hint ? '…' + token.hint + ' · ' : '') + 'id ' + token.id));
    tr.appendChild(head);
    tr.appendChild(el('td', 'kind', TOKEN_KIND_WORDS[token.kind] || token.kind));
    var owner = el('td', 'owner');
    if (token.originator) {
      owner.appendChild(el('span', 'station-id', token.originator.id));
      owner.appendChild(el('span', 'station-name', token.originator.name));
    } else if (token.user) {
      owner.appendChild(el('span', 'station-id', token.user.id));
      owner.appendChild(el('span', 'station-name', token.user.email || ''));
    } else {
      owner.textContent = '—';
    }
    tr.appendChild(owner);
    tr.appendChild(el('td', 'source', token.source === 'registry' ? 'registry file' : 'portal'));
    var expires = el('td', 'expires');
    var when = el('time', 'expires-at', localTime(token.expires_at));
    when.dateTime = token.expires_at;
    expires.appendChild(when);
    var soon = el('span', 'station-name expires-in', left(token.expires_at));
    if (new Date(token.expires_at).getTime() - Date.now() <= 7 * DAY_MS) expires.classList.add('expires-soon');
    expires.appendChild(soon);
    tr.appendChild(expires);
    rows.appendChild(tr);
  });
}

document.addEventListener('hrs-expiring-tokens', function (event) {
  render(event.detail);
});

// The dashboard's "Latest events": changes, receipts, openings, token events and refused import calls,
// newest first. A change says what changed: the value before and after ("available (2 of 2 nozzles) →
// unavailable (in maintenance)"), and the freshness when it changed; a new reading that repeats the
// published value (`repeat` on the feed) is no event. The sandbox's lines show only when asked for.
// dashboard.js hands the feed's messages over (`add`, `clear`). Every text is set with textContent.
import { el, localTime, summarise } from './cells.js';
import { isSandbox } from './rows.js';
import { CATEGORIES, TOKEN_EVENT_WORDS } from './vocabulary.js';

var TAIL_LIMIT = 200;
/** Each category's label in running text, by the key the feed carries it under. */
var CATEGORY_LABELS = {};
CATEGORIES.forEach(function (category) {
  CATEGORY_LABELS[category.key] = category.label.toLowerCase();
});
var $ = function (id) {
  return document.getElementById(id);
};
var els = { tail: $('tail'), empty: $('tail-empty'), clear: $('tail-clear'), limit: $('tail-limit'), sandbox: $('tail-sandbox') };

/** What a published section says, without its times: the value a change goes from and to. */
function valueOf(category, section) {
  if (!section) return 'not published';
  if (category !== 'availability') return summarise(category, section) || 'published';
  var flags = section.station || {};
  if (flags.maintenance) return 'unavailable (in maintenance)';
  if (flags.limitedly_available) return 'limitedly available';
  var nozzles = Array.isArray(section.nozzles) && section.nozzles.length > 0;
  var list = nozzles ? section.nozzles : Array.isArray(section.fuelling_options) ? section.fuelling_options : [];
  if (list.length === 0) return 'nothing reported';
  var up = list.filter(function (x) { return x.available === true; }).length;
  var noun = nozzles ? (list.length === 1 ? 'nozzle' : 'nozzles') : list.length === 1 ? 'option' : 'options';
  return (up > 0 ? 'available' : 'unavailable') + ' (' + up + ' of ' + list.length + ' ' + noun + ')';
}

function freshness(node, previous, now) {
  node.appendChild(el('span', 'freshness-' + (previous || 'none'), previous || '—'));
  node.appendChild(document.createTextNode(' → '));
  node.appendChild(el('span', 'freshness-' + (now || 'none'), now || '—'));
}

/** A change's "what changed": the freshness step, or the value before and after (and the freshness when it changed too). */
function transition(message) {
  var node = el('span', 'tail-transition');
  if (message.cause === 'freshness' || message.previous_section === undefined) {
    freshness(node, message.previous, message.freshness);
    return node;
  }
  var before = message.previous === null ? '—' : valueOf(message.category, message.previous_section);
  node.appendChild(el('span', 'value-before', before));
  node.appendChild(document.createTextNode(' → '));
  node.appendChild(el('span', 'value-after', valueOf(message.category, message.section)));
  // The freshness too when it stepped (unknown → fresh, say); a first reading is simply fresh.
  if (message.previous !== null && message.previous !== message.freshness) {
    var step = el('span', 'freshness-step');
    step.appendChild(document.createTextNode(' · '));
    freshness(step, message.previous, message.freshness);
    node.appendChild(step);
  }
  return node;
}

/** The signal category an import endpoint takes (`POST /import/v2/signal/usage/` → usage). */
function categoryOf(endpoint) {
  var m = /\/signal\/([a-z-]+)\//.exec(endpoint || '');
  var category = m && CATEGORIES.find(function (c) {
    return c.name === m[1];
  });
  if (m) return category ? category.key : m[1];
  return /hrs-availability/.test(endpoint || '') ? 'availability' : '';
}

function clear() {
  els.tail.textContent = '';
  showEmpty();
}

function showEmpty() {
  var shown = els.tail.querySelector(els.sandbox.checked ? '.tail-line' : '.tail-line:not([data-sandbox])');
  els.empty.hidden = shown !== null;
}

function add(message) {
  if (message.type === 'change' && message.repeat === true) return;
  var li = el('li', 'tail-line tail-' + message.type);
  li.dataset.type = message.type;
  var ids = [];
  if (message.type === 'rejection') {
    ids = Array.isArray(message.hrs_ids) ? message.hrs_ids : [];
    message.hrs_id = ids.join(', ');
    message.category = categoryOf(message.endpoint);
  } else if (message.hrs_id) {
    ids = [message.hrs_id];
  }
  if (ids.length > 0 && ids.every(isSandbox)) li.dataset.sandbox = 'true';
  if (message.hrs_id) li.dataset.hrsId = message.hrs_id;
  if (message.category) li.dataset.category = message.category;
  var at = message.at || new Date().toISOString();
  var time = el('time', 'tail-time', localTime(at));
  time.dateTime = at;
  li.appendChild(time);
  li.appendChild(el('span', 'tail-station', message.hrs_id || '—'));
  li.appendChild(el('span', 'tail-category', CATEGORY_LABELS[message.category] || message.category || ''));
  if (message.type === 'change') {
    li.appendChild(el('span', 'tail-event tail-cause-' + message.cause, message.cause));
    li.appendChild(transition(message));
    li.appendChild(el('span', 'tail-originator', message.originator_id || ''));
  } else if (message.type === 'opening') {
    li.appendChild(el('span', 'tail-event', message.open ? 'opens' : 'closes'));
    li.appendChild(el('span', 'tail-transition muted', 'by its opening hours'));
    li.appendChild(el('span', 'tail-originator', ''));
  } else if (message.type === 'token') {
    var label = TOKEN_EVENT_WORDS[message.kind] || message.kind;
    if (message.kind === 'revoked' && message.by) label += ' by ' + (message.by === 'admin' ? 'an admin' : 'its owner');
    if (message.kind === 'expiring' && message.days_before) label += ' · ' + message.days_before + '-day reminder';
    li.appendChild(el('span', 'tail-event tail-token-' + message.kind, 'token ' + label));
    var what = '"' + (message.name || '') + '"' + (message.hint ? ' …' + message.hint : '');
    li.appendChild(el('span', 'tail-transition', what + (message.expires_at ? ' · expires ' + localTime(message.expires_at) : '')));
    li.appendChild(el('span', 'tail-originator', message.user_id || ''));
  } else if (message.type === 'rejection') {
    li.appendChild(el('span', 'tail-event tail-rejected', 'refused · ' + message.status));
    var error = message.error ? (message.error.path ? message.error.path + ': ' : '') + message.error.message : 'no error given';
    li.appendChild(el('span', 'tail-transition tail-detail', error));
    li.appendChild(el('span', 'tail-originator', message.originator_id || ''));
    li.title = message.endpoint || '';
  } else if (message.type === 'receipt') {
    var via = message.source ? ' · ' + message.source.replace('import_', '') : '';
    li.appendChild(el('span', 'tail-event tail-assignment-' + message.assignment, 'receipt · ' + message.assignment + via));
    li.appendChild(el('span', 'tail-transition muted', 'not published'));
    li.appendChild(el('span', 'tail-originator', message.originator_id || ''));
  } else {
    li.appendChild(el('span', 'tail-event', 'error · ' + (message.code || '')));
    li.appendChild(el('span', 'tail-transition tail-detail', message.detail || ''));
    li.appendChild(el('span', 'tail-originator', ''));
  }
  if (message.datetime) li.title = 'measured ' + localTime(message.datetime) + (message.received_datetime ? '\nreceived ' + localTime(message.received_datetime) : '');
  els.tail.insertBefore(li, els.tail.firstChild);
  while (els.tail.children.length > TAIL_LIMIT) els.tail.removeChild(els.tail.lastChild);
  showEmpty();
}

function showSandbox() {
  els.tail.classList.toggle('with-sandbox', els.sandbox.checked);
  showEmpty();
}

els.limit.textContent = String(TAIL_LIMIT);
els.clear.addEventListener('click', clear);
els.sandbox.addEventListener('change', showSandbox);
showSandbox();

export { add, clear };

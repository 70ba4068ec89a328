// The portal page's dates: a token's expiry as a date input offers it (within the limits the API
// answers with, a margin inside them), the instant a chosen date stands for, and instants in words.
import { state } from './page.js';

var DAY_MS = 24 * 60 * 60 * 1000;
/** Kept off both ends of the allowed expiry range: the server checks it a moment later, by its own clock. */
var EXPIRY_MARGIN_MS = 10 * 60 * 1000;
var dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export var dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

function pad(n) {
  return n < 10 ? '0' + n : String(n);
}

/** A date input's value (yyyy-mm-dd) for an instant, in the browser's time zone. */
export function localDate(date) {
  return date.getFullYear() + '-' + pad(date.getMonth() + 1) + '-' + pad(date.getDate());
}

export function parseLocalDate(text) {
  var m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text || '');
  if (!m) return null;
  var date = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return localDate(date) === text ? date : null;
}

/** The instants an expiry may take now, a margin inside the API's bounds. */
function expiryBounds() {
  var now = Date.now();
  return {
    earliest: new Date(now + state.limits.min_days * DAY_MS + EXPIRY_MARGIN_MS),
    latest: new Date(now + state.limits.max_days * DAY_MS - EXPIRY_MARGIN_MS),
  };
}

/** The dates a date input may offer now. */
export function dateBounds() {
  var b = expiryBounds();
  return { min: localDate(b.earliest), max: localDate(b.latest) };
}

/** Why a chosen date is refused, or null. */
export function dateProblem(text) {
  var date = parseLocalDate(text);
  if (!date) return 'Choose a date.';
  var b = dateBounds();
  if (text < b.min) return 'Choose a date from ' + dateFormat.format(parseLocalDate(b.min)) + ' on.';
  if (text > b.max) return 'Choose a date no later than ' + dateFormat.format(parseLocalDate(b.max)) + '.';
  return null;
}

/**
 * The expiry instant for a chosen date: that day at the present time of day (so 90 days ahead is
 * 90 days from now), kept within the allowed range on its first and last day.
 */
export function expiryFromDate(text) {
  var day = parseLocalDate(text);
  var now = new Date();
  var at = new Date(day.getFullYear(), day.getMonth(), day.getDate(), now.getHours(), now.getMinutes(), now.getSeconds());
  var b = expiryBounds();
  if (at < b.earliest) at = b.earliest;
  if (at > b.latest) at = b.latest;
  return at.toISOString();
}

export function defaultDate() {
  return localDate(new Date(Date.now() + state.limits.default_days * DAY_MS));
}

/** A date within the bounds, the nearest one to `text`. */
export function boundedDate(text) {
  var b = dateBounds();
  if (!text || text < b.min) return b.min;
  if (text > b.max) return b.max;
  return text;
}

export function timeElement(iso) {
  var el = document.createElement('time');
  var date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) {
    el.textContent = iso ? String(iso) : '—';
    return el;
  }
  el.dateTime = date.toISOString();
  el.textContent = dateTimeFormat.format(date);
  return el;
}

export function formatInstant(iso) {
  var date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : dateTimeFormat.format(date);
}

export function setDateInput(input) {
  var b = dateBounds();
  input.min = b.min;
  input.max = b.max;
}

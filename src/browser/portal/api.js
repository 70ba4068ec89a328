// The portal page's calls and elements, for every module of the page: one call to the JSON API under
// /portal/v1/ on this origin (the session cookie goes by itself), an element builder that sets text
// only (nothing from the API is parsed as HTML), and a refusal in words.

var API = '/portal/v1/';
export var UNREACHABLE = 'The portal could not be reached. Check your connection and try again.';

/** The element with this id. */
export function $(id) {
  return document.getElementById(id);
}

/**
 * One call to the portal API: resolves with { status, body } (body: parsed JSON or null), status 0
 * when the portal could not be reached. Unsafe methods send JSON, or a Blob as it is; the browser adds
 * Origin.
 */
export function api(method, path, payload) {
  var headers = { Accept: 'application/json' };
  var init = { method: method, credentials: 'same-origin', cache: 'no-store', headers: headers };
  if (payload instanceof Blob) {
    headers['Content-Type'] = payload.type || 'application/octet-stream';
    init.body = payload;
  } else if (method !== 'GET') {
    headers['Content-Type'] = 'application/json';
    if (payload !== undefined) init.body = JSON.stringify(payload);
  }
  return fetch(API + path, init).then(
    function (res) {
      return res.text().then(function (text) {
        var parsed = null;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch (e) {
          parsed = null;
        }
        return { status: res.status, body: parsed };
      });
    },
    function () {
      return { status: 0, body: null };
    },
  );
}

/**
 * An element with attributes (`text` sets its text; `onclick` and `onchange` add listeners) and
 * children.
 */
export function h(tag, attrs, children) {
  var el = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (name) {
    var value = attrs[name];
    if (value === undefined || value === null || value === false) return;
    if (name === 'text') el.textContent = value;
    else if (name === 'onclick') el.addEventListener('click', value);
    else if (name === 'onchange') el.addEventListener('change', value);
    else el.setAttribute(name, value === true ? '' : String(value));
  });
  (children || []).forEach(function (child) {
    if (child) el.appendChild(child);
  });
  return el;
}

/** What went wrong, in words: the problem body's detail, else a fallback. */
export function problemText(result, fallback) {
  if (result.status === 0) return UNREACHABLE;
  var body = result.body;
  if (body && typeof body.detail === 'string' && body.detail) return body.detail;
  if (fallback) return fallback;
  var title = body && typeof body.title === 'string' && body.title ? body.title : 'Something went wrong';
  return title + ' (HTTP ' + result.status + '). Try again later.';
}

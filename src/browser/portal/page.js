// The portal page's frame: its elements, its views (one shown at a time, its heading focused), the
// messages beside forms, and what the page knows of the session: the signed-in user, the tokens page's
// limits and list, the view shown.
import { $ } from './api.js';

export var DEFAULT_LIMITS = { max_active: 5, min_days: 1, max_days: 366, default_days: 90 };
var VIEWS = ['loading', 'sign-in', 'link', 'reveal', 'created', 'tokens'];
var HEADINGS = {
  loading: 'loading-title',
  'sign-in': 'sign-in-title',
  link: 'link-title',
  reveal: 'reveal-title',
  created: 'created-title',
  tokens: 'create-title',
};

export var els = {
  body: document.body,
  account: $('account'),
  accountEmail: $('account-email'),
  signOut: $('sign-out'),
  notice: $('notice'),
  signInForm: $('sign-in-form'),
  signInEmail: $('sign-in-email'),
  signInSubmit: $('sign-in-submit'),
  signInMessage: $('sign-in-message'),
  linkSignIn: $('link-sign-in'),
  linkCancel: $('link-cancel'),
  linkMessage: $('link-message'),
  revealShow: $('reveal-show'),
  revealCancel: $('reveal-cancel'),
  revealMessage: $('reveal-message'),
  createdTitle: $('created-title'),
  createdName: $('created-name'),
  createdHint: $('created-hint'),
  createdExpires: $('created-expires'),
  tokenValue: $('token-value'),
  copyValue: $('copy-value'),
  copyMessage: $('copy-message'),
  createdDone: $('created-done'),
  activeCount: $('active-count'),
  createForm: $('create-form'),
  createName: $('create-name'),
  createExpires: $('create-expires'),
  createExpiresHelp: $('create-expires-help'),
  createSubmit: $('create-submit'),
  createMessage: $('create-message'),
  listTitle: $('list-title'),
  rows: $('token-rows'),
  noTokens: $('no-tokens'),
  revokeDialog: $('revoke-dialog'),
  revokeText: $('revoke-text'),
  revokeCancel: $('revoke-cancel'),
  revokeConfirm: $('revoke-confirm'),
};

/** The page's state, shared by its modules. */
export var state = {
  /** The signed-in user, or null. */
  user: null,
  limits: DEFAULT_LIMITS,
  tokens: [],
  view: 'loading',
};

/** Shows (or with no text hides) a message; kind: 'ok', 'error' or 'info'. */
export function say(el, text, kind) {
  el.textContent = text || '';
  el.dataset.kind = kind || 'info';
  el.hidden = !text;
}

export function notice(text, kind) {
  say(els.notice, text, kind);
}

export function clearMessages() {
  [els.notice, els.signInMessage, els.linkMessage, els.revealMessage, els.createMessage].forEach(function (el) {
    say(el, '');
  });
}

export function showView(next, options) {
  var focus = !options || options.focus !== false;
  if (state.view === 'created' && next !== 'created') forgetValue();
  state.view = next;
  els.body.dataset.view = next;
  VIEWS.forEach(function (name) {
    $('view-' + name).hidden = name !== next;
  });
  if (focus) {
    var heading = $(HEADINGS[next]);
    if (heading) heading.focus();
  }
}

export function setBusy(button, busy) {
  button.disabled = busy;
  if (busy) button.setAttribute('aria-busy', 'true');
  else button.removeAttribute('aria-busy');
}

/** Marks a field wrong, says why, and puts the focus on it. */
export function fieldError(input, el, text) {
  input.setAttribute('aria-invalid', 'true');
  say(el, text, 'error');
  input.focus();
}

export function fieldOk(input) {
  input.removeAttribute('aria-invalid');
}

/** Removes the value from the page: the only place it was kept. */
function forgetValue() {
  var selection = window.getSelection();
  if (selection && els.tokenValue.contains(selection.anchorNode)) selection.removeAllRanges();
  els.tokenValue.textContent = '';
  els.createdName.textContent = '';
  els.createdHint.textContent = '';
  els.createdExpires.textContent = '';
  say(els.copyMessage, '');
}

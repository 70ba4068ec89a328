// A token's value shown once (a token just created, tokens.js, or revealed, session.js): its view with
// a copy button; the value lives only in the page's text. Leaving the view is session.js's (leaveValue).
import { formatInstant } from './dates.js';
import { els, say, showView, state } from './page.js';

/** The value's last characters as shown ('…AbCd'); a dash for a token whose are not known (loaded from a registry file). */
export function hintText(token) {
  return token.hint ? '…' + token.hint : '—';
}

/** The view holding a value just created or revealed; `done` says where its button leads. */
export function showValue(token, value, title) {
  els.createdTitle.textContent = title;
  els.createdName.textContent = token.name || '';
  els.createdHint.textContent = hintText(token);
  els.createdExpires.textContent = token.expires_at ? formatInstant(token.expires_at) : '—';
  els.tokenValue.textContent = value;
  say(els.copyMessage, '');
  els.createdDone.textContent = state.user ? 'Back to my tokens' : 'Done';
  showView('created');
}

function selectValue() {
  var selection = window.getSelection();
  if (!selection) return;
  var range = document.createRange();
  range.selectNodeContents(els.tokenValue);
  selection.removeAllRanges();
  selection.addRange(range);
}

els.copyValue.addEventListener('click', function () {
  var value = els.tokenValue.textContent;
  if (!value) return;
  var selected = function () {
    selectValue();
    say(els.copyMessage, 'The value is selected: copy it with Ctrl+C (⌘C on a Mac) or your device’s Copy.', 'info');
  };
  if (!navigator.clipboard || typeof navigator.clipboard.writeText !== 'function') {
    selected();
    return;
  }
  navigator.clipboard.writeText(value).then(function () {
    say(els.copyMessage, 'Copied to the clipboard.', 'ok');
  }, selected);
});

els.tokenValue.addEventListener('click', selectValue);

// The signed-in user's personal API tokens: the list (read again when the page comes back into view),
// creating one (its value shown once, value.js), changing a token's expiry and revoking one.
import { sessionEnded } from './account.js';
import { api, problemText } from './api.js';
import { boundedDate, dateBounds, dateFormat, dateProblem, defaultDate, expiryFromDate, formatInstant, localDate, parseLocalDate, setDateInput, timeElement } from './dates.js';
import { clearMessages, DEFAULT_LIMITS, els, fieldError, fieldOk, notice, say, setBusy, showView, state } from './page.js';
import { hintText, showValue } from './value.js';

/** The token the revoke dialog asks about. */
var revoking = null;
var formCounter = 0;

export function loadTokens(options) {
  return api('GET', 'tokens').then(function (result) {
    if (result.status === 401) {
      sessionEnded();
      return;
    }
    if (result.status !== 200 || !result.body || !Array.isArray(result.body.tokens)) {
      state.tokens = [];
      renderTokens();
      showView('tokens', options);
      notice('Your tokens could not be loaded: ' + problemText(result), 'error');
      return;
    }
    state.limits = Object.assign({}, DEFAULT_LIMITS, result.body.limits || {});
    state.tokens = result.body.tokens;
    renderTokens();
    resetCreateForm();
    showView('tokens', options);
  });
}

function resetCreateForm() {
  setDateInput(els.createExpires);
  els.createName.value = '';
  els.createExpires.value = boundedDate(defaultDate());
  fieldOk(els.createName);
  fieldOk(els.createExpires);
  var b = dateBounds();
  els.createExpiresHelp.textContent =
    'Between ' + dateFormat.format(parseLocalDate(b.min)) + ' and ' + dateFormat.format(parseLocalDate(b.max)) + '. You can change it later.';
}

/**
 * The list read again when the page comes back into view (a token used meanwhile shows its last use);
 * only on the tokens view, with no form open or being filled in.
 */
document.addEventListener('visibilitychange', function () {
  if (document.visibilityState !== 'visible' || state.view !== 'tokens' || !state.user || els.body.dataset.workspace) return;
  if (els.createName.value || els.rows.querySelector('.expiry-form:not([hidden])')) return;
  loadTokens({ focus: false });
});

function activeCount() {
  return state.tokens.filter(function (token) {
    return token.state === 'active';
  }).length;
}

function renderTokens() {
  els.rows.textContent = '';
  state.tokens.forEach(function (token) {
    els.rows.appendChild(tokenRow(token));
  });
  els.noTokens.hidden = state.tokens.length > 0;
  var active = activeCount();
  els.activeCount.textContent =
    'You have ' + active + ' of ' + state.limits.max_active + ' active tokens' + (active >= state.limits.max_active ? ': revoke one before creating another.' : '.');
}

function cell(label, content) {
  var td = document.createElement('td');
  td.dataset.label = label;
  if (typeof content === 'string') td.textContent = content;
  else td.appendChild(content);
  return td;
}

function button(text, className, accessibleName) {
  var b = document.createElement('button');
  b.type = 'button';
  b.className = className;
  b.textContent = text;
  if (accessibleName) b.setAttribute('aria-label', accessibleName);
  return b;
}

function tokenRow(token) {
  var tr = document.createElement('tr');
  tr.dataset.tokenId = token.id;
  tr.dataset.state = token.state;

  var name = document.createElement('th');
  name.scope = 'row';
  name.className = 'token-name';
  name.dataset.label = 'Name';
  name.textContent = token.name;
  tr.appendChild(name);

  var hint = document.createElement('span');
  hint.className = 'mono';
  hint.textContent = hintText(token);
  tr.appendChild(cell('Token', hint));
  tr.appendChild(cell('Created', timeElement(token.created_at)));
  tr.appendChild(cell('Expires', timeElement(token.expires_at)));
  tr.appendChild(cell('Last used', token.last_used_at ? timeElement(token.last_used_at) : 'never'));

  var state = document.createElement('span');
  state.className = 'state';
  var pill = document.createElement('span');
  pill.className = 'pill pill-' + token.state;
  pill.textContent = token.state;
  state.appendChild(pill);
  if (token.state === 'revoked' && token.revoked_at) {
    var when = document.createElement('span');
    when.className = 'state-when';
    when.appendChild(document.createTextNode(' '));
    when.appendChild(timeElement(token.revoked_at));
    state.appendChild(when);
  }
  tr.appendChild(cell('State', state));

  var actions = document.createElement('td');
  actions.className = 'token-actions';
  if (token.state === 'active') actions.appendChild(tokenActions(token));
  tr.appendChild(actions);
  return tr;
}

/** Change expiry (a date, saved with PATCH) and revoke (after confirming), for an active token. */
function tokenActions(token) {
  var box = document.createElement('div');
  box.className = 'action-box';
  var id = 'expiry-' + ++formCounter;
  var buttons = document.createElement('div');
  buttons.className = 'action-buttons';
  var change = button('Change expiry', 'button button-small button-secondary', 'Change expiry of “' + token.name + '”');
  change.setAttribute('aria-expanded', 'false');
  change.setAttribute('aria-controls', id + '-form');
  change.dataset.action = 'change-expiry';
  var revoke = button('Revoke', 'button button-small button-danger-quiet', 'Revoke “' + token.name + '”');
  revoke.dataset.action = 'revoke';
  buttons.appendChild(change);
  buttons.appendChild(revoke);
  box.appendChild(buttons);

  var form = document.createElement('form');
  form.id = id + '-form';
  form.className = 'expiry-form';
  form.noValidate = true;
  form.hidden = true;
  var label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = 'New expiry date';
  var input = document.createElement('input');
  input.type = 'date';
  input.id = id;
  input.required = true;
  var save = button('Save', 'button button-small', 'Save the new expiry of “' + token.name + '”');
  save.type = 'submit';
  var cancel = button('Cancel', 'button button-small button-quiet');
  var message = document.createElement('p');
  message.className = 'message';
  message.setAttribute('role', 'status');
  message.setAttribute('aria-live', 'polite');
  message.hidden = true;
  input.setAttribute('aria-describedby', id + '-message');
  message.id = id + '-message';
  var row = document.createElement('div');
  row.className = 'expiry-row';
  row.appendChild(input);
  row.appendChild(save);
  row.appendChild(cancel);
  form.appendChild(label);
  form.appendChild(row);
  form.appendChild(message);
  box.appendChild(form);

  var close = function () {
    form.hidden = true;
    change.setAttribute('aria-expanded', 'false');
    say(message, '');
    fieldOk(input);
    change.focus();
  };
  change.addEventListener('click', function () {
    if (!form.hidden) {
      close();
      return;
    }
    setDateInput(input);
    input.value = boundedDate(localDate(new Date(token.expires_at)));
    form.hidden = false;
    change.setAttribute('aria-expanded', 'true');
    input.focus();
  });
  cancel.addEventListener('click', close);
  form.addEventListener('keydown', function (event) {
    if (event.key === 'Escape') {
      event.preventDefault();
      close();
    }
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    clearMessages();
    var problem = dateProblem(input.value);
    if (problem) {
      fieldError(input, message, problem);
      return;
    }
    fieldOk(input);
    setBusy(save, true);
    api('PATCH', 'tokens/' + encodeURIComponent(token.id), { expires_at: expiryFromDate(input.value) })
      .then(function (result) {
        if (result.status === 200 && result.body && result.body.token) {
          replaceToken(result.body.token);
          notice('“' + result.body.token.name + '” now expires on ' + formatInstant(result.body.token.expires_at) + '.', 'ok');
          focusRow(result.body.token.id, 'change-expiry');
          return;
        }
        if (result.status === 401) {
          sessionEnded();
          return;
        }
        say(message, problemText(result), 'error');
        input.focus();
      })
      .finally(function () {
        setBusy(save, false);
      });
  });
  revoke.addEventListener('click', function () {
    askRevoke(token, revoke);
  });
  return box;
}

function replaceToken(next) {
  var found = false;
  state.tokens = state.tokens.map(function (token) {
    if (token.id !== next.id) return token;
    found = true;
    return next;
  });
  if (!found) state.tokens.unshift(next);
  renderTokens();
}

/** Puts the focus on a row's button (or, when it has none any more, on the list's heading). */
function focusRow(id, action) {
  var rows = els.rows.querySelectorAll('tr');
  for (var i = 0; i < rows.length; i++) {
    if (rows[i].dataset.tokenId !== String(id)) continue;
    var target = rows[i].querySelector('button[data-action="' + action + '"]');
    if (target) {
      target.focus();
      return;
    }
  }
  els.listTitle.focus();
}

els.createForm.addEventListener('submit', function (event) {
  event.preventDefault();
  clearMessages();
  var name = els.createName.value.trim();
  if (!name) {
    fieldError(els.createName, els.createMessage, 'Give the token a name, so you can tell it from the others.');
    return;
  }
  fieldOk(els.createName);
  var problem = dateProblem(els.createExpires.value);
  if (problem) {
    fieldError(els.createExpires, els.createMessage, problem);
    return;
  }
  fieldOk(els.createExpires);
  setBusy(els.createSubmit, true);
  api('POST', 'tokens', { name: name, expires_at: expiryFromDate(els.createExpires.value) })
    .then(function (result) {
      var body = result.body;
      if (result.status === 201 && body && body.token && typeof body.value === 'string') {
        replaceToken(body.token);
        resetCreateForm();
        showValue(body.token, body.value, 'Token created');
        body.value = null;
        return;
      }
      if (result.status === 401) {
        sessionEnded();
        return;
      }
      say(els.createMessage, problemText(result), 'error');
    })
    .finally(function () {
      setBusy(els.createSubmit, false);
    });
});

// --- revoking -----------------------------------------------------------------------------------

var revokeOpener = null;

function askRevoke(token, opener) {
  revoking = token;
  revokeOpener = opener;
  els.revokeText.textContent =
    '“' + token.name + '”' + (token.hint ? ' (…' + token.hint + ')' : '') + ' stops working at once: every request made with it is refused. This cannot be undone.';
  els.revokeDialog.showModal();
  els.revokeCancel.focus();
}

els.revokeCancel.addEventListener('click', function () {
  els.revokeDialog.close();
});

els.revokeDialog.addEventListener('close', function () {
  var opener = revokeOpener;
  revoking = null;
  revokeOpener = null;
  setBusy(els.revokeConfirm, false);
  if (opener && opener.isConnected) opener.focus();
});

els.revokeConfirm.addEventListener('click', function () {
  var token = revoking;
  if (!token) return;
  clearMessages();
  setBusy(els.revokeConfirm, true);
  api('POST', 'tokens/' + encodeURIComponent(token.id) + '/revoke').then(function (result) {
    if (result.status === 200 && result.body && result.body.token) {
      revokeOpener = null;
      els.revokeDialog.close();
      replaceToken(result.body.token);
      notice('“' + result.body.token.name + '” is revoked.', 'ok');
      els.listTitle.focus();
      return;
    }
    els.revokeDialog.close();
    if (result.status === 401) {
      sessionEnded();
      return;
    }
    notice('Revoking “' + token.name + '” failed: ' + problemText(result), 'error');
  });
});

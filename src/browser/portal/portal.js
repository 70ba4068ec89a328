// The portal's page: sign-in by e-mailed link, and the signed-in user's personal API tokens (list,
// create, change expiry, revoke), all through the JSON API under /portal/v1/ on this origin. The
// session is an HttpOnly cookie the browser sends by itself. Every text from the API is set with
// textContent; nothing is parsed as HTML. A token's value is shown once and dropped when its view is
// left.
(function () {
  'use strict';

  var API = '/portal/v1/';
  var DAY_MS = 24 * 60 * 60 * 1000;
  /** Kept off both ends of the allowed expiry range: the server checks it a moment later, by its own clock. */
  var EXPIRY_MARGIN_MS = 10 * 60 * 1000;
  var DEFAULT_LIMITS = { max_active: 5, min_days: 1, max_days: 366, default_days: 90 };
  var UNREACHABLE = 'The portal could not be reached. Check your connection and try again.';
  var LINK_GONE = 'This sign-in link was used already or has expired. Ask for a new one below.';
  var REVEAL_GONE = 'This link was used already or has expired.';
  var VIEWS = ['loading', 'sign-in', 'link', 'reveal', 'created', 'tokens'];
  var HEADINGS = {
    loading: 'loading-title',
    'sign-in': 'sign-in-title',
    link: 'link-title',
    reveal: 'reveal-title',
    created: 'created-title',
    tokens: 'create-title',
  };

  var $ = function (id) {
    return document.getElementById(id);
  };
  var els = {
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

  var dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  var dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

  /** The signed-in user, or null. */
  var user = null;
  var limits = DEFAULT_LIMITS;
  var tokens = [];
  /** The secret of the link the page was opened with ({ kind: 'sign-in' | 'reveal', secret }), until used. */
  var pending = null;
  /** The token the revoke dialog asks about. */
  var revoking = null;
  var view = 'loading';
  var formCounter = 0;

  // --- the API --------------------------------------------------------------------------------

  /**
   * One call to the portal API: resolves with { status, body } (body: parsed JSON or null), status 0
   * when the portal could not be reached. Unsafe methods send JSON, or a Blob as it is; the browser adds
   * Origin. Shared with the other scripts of the page (window.HrsPortal).
   */
  function api(method, path, payload) {
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
   * children; for the other scripts of the page (window.HrsPortal).
   */
  function h(tag, attrs, children) {
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

  window.HrsPortal = { api: api, h: h };

  /** What went wrong, in words: the problem body's detail, else a fallback. */
  function problemText(result, fallback) {
    if (result.status === 0) return UNREACHABLE;
    var body = result.body;
    if (body && typeof body.detail === 'string' && body.detail) return body.detail;
    if (fallback) return fallback;
    var title = body && typeof body.title === 'string' && body.title ? body.title : 'Something went wrong';
    return title + ' (HTTP ' + result.status + '). Try again later.';
  }

  // --- messages and views ---------------------------------------------------------------------

  /** Shows (or with no text hides) a message; kind: 'ok', 'error' or 'info'. */
  function say(el, text, kind) {
    el.textContent = text || '';
    el.dataset.kind = kind || 'info';
    el.hidden = !text;
  }

  function notice(text, kind) {
    say(els.notice, text, kind);
  }

  function clearMessages() {
    [els.notice, els.signInMessage, els.linkMessage, els.revealMessage, els.createMessage].forEach(function (el) {
      say(el, '');
    });
  }

  function showView(next, options) {
    var focus = !options || options.focus !== false;
    if (view === 'created' && next !== 'created') forgetValue();
    view = next;
    els.body.dataset.view = next;
    VIEWS.forEach(function (name) {
      $('view-' + name).hidden = name !== next;
    });
    if (focus) {
      var heading = $(HEADINGS[next]);
      if (heading) heading.focus();
    }
  }

  function setBusy(button, busy) {
    button.disabled = busy;
    if (busy) button.setAttribute('aria-busy', 'true');
    else button.removeAttribute('aria-busy');
  }

  /** Marks a field wrong, says why, and puts the focus on it. */
  function fieldError(input, el, text) {
    input.setAttribute('aria-invalid', 'true');
    say(el, text, 'error');
    input.focus();
  }

  function fieldOk(input) {
    input.removeAttribute('aria-invalid');
  }

  // --- dates ----------------------------------------------------------------------------------

  function pad(n) {
    return n < 10 ? '0' + n : String(n);
  }

  /** A date input's value (yyyy-mm-dd) for an instant, in the browser's time zone. */
  function localDate(date) {
    return date.getFullYear() + '-' + pad(date.getMonth() + 1) + '-' + pad(date.getDate());
  }

  function parseLocalDate(text) {
    var m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text || '');
    if (!m) return null;
    var date = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    return localDate(date) === text ? date : null;
  }

  /** The instants an expiry may take now, a margin inside the API's bounds. */
  function expiryBounds() {
    var now = Date.now();
    return {
      earliest: new Date(now + limits.min_days * DAY_MS + EXPIRY_MARGIN_MS),
      latest: new Date(now + limits.max_days * DAY_MS - EXPIRY_MARGIN_MS),
    };
  }

  /** The dates a date input may offer now. */
  function dateBounds() {
    var b = expiryBounds();
    return { min: localDate(b.earliest), max: localDate(b.latest) };
  }

  /** Why a chosen date is refused, or null. */
  function dateProblem(text) {
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
  function expiryFromDate(text) {
    var day = parseLocalDate(text);
    var now = new Date();
    var at = new Date(day.getFullYear(), day.getMonth(), day.getDate(), now.getHours(), now.getMinutes(), now.getSeconds());
    var b = expiryBounds();
    if (at < b.earliest) at = b.earliest;
    if (at > b.latest) at = b.latest;
    return at.toISOString();
  }

  function defaultDate() {
    return localDate(new Date(Date.now() + limits.default_days * DAY_MS));
  }

  /** A date within the bounds, the nearest one to `text`. */
  function boundedDate(text) {
    var b = dateBounds();
    if (!text || text < b.min) return b.min;
    if (text > b.max) return b.max;
    return text;
  }

  function timeElement(iso) {
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

  function formatInstant(iso) {
    var date = new Date(iso);
    return Number.isNaN(date.getTime()) ? String(iso) : dateTimeFormat.format(date);
  }

  function setDateInput(input) {
    var b = dateBounds();
    input.min = b.min;
    input.max = b.max;
  }

  // --- session ----------------------------------------------------------------------------------

  function setUser(next) {
    user = next || null;
    els.account.hidden = !user;
    els.accountEmail.textContent = user ? user.email || user.name || '' : '';
  }

  function showSignIn(options) {
    setUser(null);
    tokens = [];
    els.rows.textContent = '';
    showView('sign-in', options);
    if (!options || options.focus !== false) els.signInEmail.focus();
  }

  /**
   * Whether a session is open: `session/state` answers 200 either way (so a visitor not signed in
   * causes no refusal, and no error in the browser's console); { status, user } (user null: not signed in).
   */
  function probeSession() {
    return api('GET', 'session/state').then(function (result) {
      var signedIn = result.status === 200 && result.body && result.body.signed_in === true && result.body.user;
      return { result: result, user: signedIn ? result.body.user : null };
    });
  }

  /** The page without a link: the tokens when signed in, else the sign-in form. */
  function home() {
    showView('loading', { focus: false });
    return probeSession().then(function (probe) {
      if (probe.user) {
        setUser(probe.user);
        return loadTokens();
      }
      if (probe.result.status !== 200) notice(problemText(probe.result), 'error');
      showSignIn({ focus: false });
      return undefined;
    });
  }

  function sessionEnded() {
    showSignIn();
    notice('Your session has ended. Sign in again.', 'error');
  }

  window.HrsPortal.sessionEnded = sessionEnded;

  els.signInForm.addEventListener('submit', function (event) {
    event.preventDefault();
    clearMessages();
    var email = els.signInEmail.value.trim();
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
      fieldError(els.signInEmail, els.signInMessage, 'Enter your e-mail address, like name@example.com.');
      return;
    }
    fieldOk(els.signInEmail);
    setBusy(els.signInSubmit, true);
    api('POST', 'sign-in', { email: email })
      .then(function (result) {
        if (result.status === 202) {
          say(els.signInMessage, problemText(result, 'If this address has an account, a sign-in link is on its way to it.'), 'ok');
        } else {
          say(els.signInMessage, problemText(result), 'error');
        }
      })
      .finally(function () {
        setBusy(els.signInSubmit, false);
      });
  });

  els.linkSignIn.addEventListener('click', function () {
    if (!pending || pending.kind !== 'sign-in') return;
    clearMessages();
    setBusy(els.linkSignIn, true);
    api('POST', 'session', { token: pending.secret })
      .then(function (result) {
        if (result.status === 201 && result.body && result.body.user) {
          pending = null;
          // The header says who is signed in; the focus goes to the first view's heading.
          setUser(result.body.user);
          return loadTokens();
        }
        if (result.status === 0 || result.status === 429 || result.status >= 500) {
          // The link may still work: keep it, and the button, for another try.
          say(els.linkMessage, problemText(result), 'error');
          return undefined;
        }
        pending = null;
        showSignIn();
        notice(problemText(result, LINK_GONE), 'error');
        return undefined;
      })
      .finally(function () {
        setBusy(els.linkSignIn, false);
      });
  });

  /** A link's view left without using the link: back to where the page was. */
  function dropLink() {
    pending = null;
    clearMessages();
    home();
  }

  els.linkCancel.addEventListener('click', dropLink);

  els.signOut.addEventListener('click', function () {
    clearMessages();
    setBusy(els.signOut, true);
    api('DELETE', 'session')
      .then(function (result) {
        if (result.status === 204 || result.status === 401) {
          if (window.HrsPortal.signedOut) window.HrsPortal.signedOut();
          showSignIn();
          notice('You are signed out.', 'ok');
        } else {
          notice('Signing out failed: ' + problemText(result), 'error');
        }
      })
      .finally(function () {
        setBusy(els.signOut, false);
      });
  });

  // --- a token's value, shown once -------------------------------------------------------------

  /** The view holding a value just created or revealed; `done` says where its button leads. */
  function showValue(token, value, title) {
    els.createdTitle.textContent = title;
    els.createdName.textContent = token.name || '';
    els.createdHint.textContent = hintText(token);
    els.createdExpires.textContent = token.expires_at ? formatInstant(token.expires_at) : '—';
    els.tokenValue.textContent = value;
    say(els.copyMessage, '');
    els.createdDone.textContent = user ? 'Back to my tokens' : 'Done';
    showView('created');
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

  /** Leaves the value's view: to the tokens when signed in, else to where the page starts. */
  function leaveValue() {
    clearMessages();
    if (user) loadTokens();
    else home();
  }

  els.createdDone.addEventListener('click', leaveValue);
  window.HrsPortal.leaveValue = leaveValue;

  // --- the reveal link ----------------------------------------------------------------------------

  // Used as the sign-in link is (above), alike by shape: its own endpoint, and a token's value to show.
  els.revealShow.addEventListener('click', function () {
    if (!pending || pending.kind !== 'reveal') return;
    clearMessages();
    setBusy(els.revealShow, true);
    api('POST', 'reveal', { secret: pending.secret })
      .then(function (result) {
        var body = result.body;
        if (result.status === 201 && body && body.token && typeof body.value === 'string') {
          pending = null;
          showValue(body.token, body.value, 'Your API token');
          body.value = null;
          return undefined;
        }
        if (result.status === 0 || result.status === 429 || result.status >= 500) {
          say(els.revealMessage, problemText(result), 'error');
          return undefined;
        }
        pending = null;
        var text = problemText(result, REVEAL_GONE);
        return home().then(function () {
          notice(text, 'error');
        });
      })
      .finally(function () {
        setBusy(els.revealShow, false);
      });
  });

  els.revealCancel.addEventListener('click', dropLink);

  // --- the tokens ---------------------------------------------------------------------------------

  function loadTokens(options) {
    return api('GET', 'tokens').then(function (result) {
      if (result.status === 401) {
        sessionEnded();
        return;
      }
      if (result.status !== 200 || !result.body || !Array.isArray(result.body.tokens)) {
        tokens = [];
        renderTokens();
        showView('tokens', options);
        notice('Your tokens could not be loaded: ' + problemText(result), 'error');
        return;
      }
      limits = Object.assign({}, DEFAULT_LIMITS, result.body.limits || {});
      tokens = result.body.tokens;
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

  /** The value's last characters as shown ('…AbCd'); a dash for a token whose are not known (loaded from a registry file). */
  function hintText(token) {
    return token.hint ? '…' + token.hint : '—';
  }

  /**
   * The list read again when the page comes back into view (a token used meanwhile shows its last use);
   * only on the tokens view, with no form open or being filled in.
   */
  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState !== 'visible' || view !== 'tokens' || !user || els.body.dataset.workspace) return;
    if (els.createName.value || els.rows.querySelector('.expiry-form:not([hidden])')) return;
    loadTokens({ focus: false });
  });

  function activeCount() {
    return tokens.filter(function (token) {
      return token.state === 'active';
    }).length;
  }

  function renderTokens() {
    els.rows.textContent = '';
    tokens.forEach(function (token) {
      els.rows.appendChild(tokenRow(token));
    });
    els.noTokens.hidden = tokens.length > 0;
    var active = activeCount();
    els.activeCount.textContent =
      'You have ' + active + ' of ' + limits.max_active + ' active tokens' + (active >= limits.max_active ? ': revoke one before creating another.' : '.');
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
    tokens = tokens.map(function (token) {
      if (token.id !== next.id) return token;
      found = true;
      return next;
    });
    if (!found) tokens.unshift(next);
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

  // --- links the page is opened with ----------------------------------------------------------------

  /** A sign-in or reveal secret from the address's fragment, which is then removed from the address bar. */
  function readFragment() {
    var m = /^#(sign-in|reveal)=(.+)$/.exec(location.hash);
    if (!m) return null;
    history.replaceState(null, '', location.pathname + location.search);
    var secret = m[2];
    try {
      secret = decodeURIComponent(secret);
    } catch (e) {
      /* used as it is */
    }
    return { kind: m[1], secret: secret };
  }

  /**
   * A link is never used by opening it (mail scanners open links): the page asks for a press of a
   * button first.
   */
  function openLink(link) {
    pending = link;
    clearMessages();
    if (els.revokeDialog.open) els.revokeDialog.close();
    if (link.kind === 'sign-in') {
      showView('link');
      return;
    }
    showView('reveal');
    // Whether someone is signed in here decides where the page goes after the value is shown.
    probeSession().then(function (probe) {
      if (probe.user) setUser(probe.user);
    });
  }

  window.addEventListener('hashchange', function () {
    var link = readFragment();
    if (link) openLink(link);
  });

  // The secret leaves the address bar at once; the page starts once every script of it has run (each
  // is fetched on its own: an answer arriving before router.js listens would not be routed).
  var link = readFragment();
  var start = function () {
    if (link) openLink(link);
    else home();
  };
  // Deferred scripts run before DOMContentLoaded, the document already 'interactive'.
  if (document.readyState === 'complete') start();
  else document.addEventListener('DOMContentLoaded', start);
})();

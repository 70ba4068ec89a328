// The portal's session: sign-in by e-mailed link (the link opens a page that asks for a press of a
// button: mail scanners open links), signing out, the reveal link, and leaving the view of a token's
// value (value.js shows it once). The page starts here, once every module of it has run.
import { setUser, showSignIn } from './account.js';
import { api, problemText } from './api.js';
import { els, fieldError, fieldOk, notice, say, setBusy, showView, clearMessages, state } from './page.js';
import { loadTokens } from './tokens.js';
import { showValue } from './value.js';

var LINK_GONE = 'This sign-in link was used already or has expired. Ask for a new one below.';
var REVEAL_GONE = 'This link was used already or has expired.';
/** The secret of the link the page was opened with ({ kind: 'sign-in' | 'reveal', secret }), until used. */
var pending = null;

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
        // The other views (router.js) close what they show before the sign-in form comes.
        document.dispatchEvent(new CustomEvent('hrs-signed-out'));
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

// --- a token's value, shown once (value.js) -------------------------------------------------------

/** Leaves the value's view: to the tokens when signed in, else to where the page starts. */
export function leaveValue() {
  clearMessages();
  if (state.user) loadTokens();
  else home();
}

els.createdDone.addEventListener('click', leaveValue);

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

// The secret leaves the address bar at once; the page starts once every module of it has run (an
// answer arriving before router.js listens would not be routed).
var link = readFragment();
var start = function () {
  if (link) openLink(link);
  else home();
};
// Module scripts run before DOMContentLoaded, the document already 'interactive'.
if (document.readyState === 'complete') start();
else document.addEventListener('DOMContentLoaded', start);

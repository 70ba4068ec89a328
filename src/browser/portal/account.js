// Who is signed in, as the page shows it: the header's account, the sign-in form (every other view
// dropped), and a session that ended under a view (an answer of 401: tokens.js, webhook-common.js).
// session.js signs in and out; the views below it end a session through here, never through it.
import { els, notice, showView, state } from './page.js';

/** The user the header names (null: nobody signed in). */
export function setUser(next) {
  state.user = next || null;
  els.account.hidden = !state.user;
  els.accountEmail.textContent = state.user ? state.user.email || state.user.name || '' : '';
}

/** The sign-in form, nobody signed in and no tokens listed; the focus on its e-mail unless `options.focus` is false. */
export function showSignIn(options) {
  setUser(null);
  state.tokens = [];
  els.rows.textContent = '';
  showView('sign-in', options);
  if (!options || options.focus !== false) els.signInEmail.focus();
}

/** The session ended (an answer of 401): the sign-in form, saying so. */
export function sessionEnded() {
  showSignIn();
  notice('Your session has ended. Sign in again.', 'error');
}

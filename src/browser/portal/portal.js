// The portal page's entry. Each module imports what it uses; these two start the page: the session
// (sign-in, the tokens, the links the page is opened with: session.js) and the addresses of the views
// with the workspaces behind them (router.js, registry.js).
import './session.js';
import './router.js';

// The portal page's workspaces beside the API tokens page: the webhooks (every signed-in user's,
// webhooks.js) and, for the roles the session names, operator staff's stations (stations.js) and
// originator managers' originators (originators.js). It shows their tabs once session.js has signed the
// user in, and opens what the router (router.js) asks for.
import { $, api } from './api.js';
import { closeOriginator, forgetImportValue, loadOriginators, openOriginator } from './originators.js';
import { tell } from './registry-parts.js';
import { closeStation, loadStations, openStation } from './stations.js';
import * as Webhooks from './webhooks.js';

var body = document.body;
var tabs = { '': $('ws-tokens-tab'), webhooks: $('ws-webhooks-tab'), stations: $('ws-stations-tab'), originators: $('ws-originators-tab') };
var spaces = { webhooks: $('ws-webhooks'), stations: $('ws-stations'), originators: $('ws-originators') };
var roles = null;

/** Shows the tabs the roles allow once the user is on the tokens page (signed in); the tokens and the webhooks are everyone's. */
function onView() {
  var signedIn = body.dataset.view === 'tokens';
  if (!signedIn) {
    roles = null;
    $('workspaces').hidden = true;
    open('');
    tell('roles', null);
    return;
  }
  if (roles) return;
  api('GET', 'session').then(function (result) {
    if (result.status !== 200 || !result.body || !result.body.roles) return;
    roles = result.body.roles;
    var operatorStaff = roles.admin || roles.operators.length > 0;
    var manager = roles.admin || roles.originators.length > 0;
    tabs.stations.hidden = !operatorStaff;
    tabs.originators.hidden = !manager;
    $('workspaces').hidden = false;
    tell('roles', roles);
  });
}

/** The workspaces' messages: what one said is gone when another workspace opens. */
var WORKSPACE_MESSAGES = ['notice', 'copy-message', 'create-message', 'webhooks-message', 'webhook-detail-message', 'webhook-secret-message', 'station-message', 'originator-message'];
/** The workspace open now (null: none yet). */
var opened = null;

function clearMessages() {
  WORKSPACE_MESSAGES.forEach(function (id) {
    var el = $(id);
    if (!el) return;
    el.textContent = '';
    el.hidden = true;
  });
}

/** Opens a workspace ('' is the API tokens page); the webhooks' (webhooks.js) drops what it shows once left. */
function open(name) {
  if (opened !== null && opened !== name) clearMessages();
  opened = name;
  if (name) body.dataset.workspace = name;
  else delete body.dataset.workspace;
  Object.keys(tabs).forEach(function (key) {
    tabs[key].setAttribute('aria-pressed', String(key === name));
  });
  Object.keys(spaces).forEach(function (key) {
    spaces[key].hidden = key !== name;
  });
  $('view-tokens').hidden = name !== '' || body.dataset.view !== 'tokens';
  forgetImportValue();
  if (name === 'webhooks') Webhooks.show();
  else Webhooks.leave();
  if (name === 'stations') loadStations();
  if (name === 'originators') loadOriginators();
}

Object.keys(tabs).forEach(function (key) {
  tabs[key].addEventListener('click', function () {
    open(key);
    tell('navigated', '/' + (key || 'tokens'));
  });
});
new MutationObserver(onView).observe(body, { attributes: true, attributeFilter: ['data-view'] });
onView();

// What the router (router.js) opens when the address changes.
export { open, openStation, closeStation, openOriginator, closeOriginator };

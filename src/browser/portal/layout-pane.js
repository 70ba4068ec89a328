// A station's Layout tab (opened by stations.js): the confirmed layout, the draft (a form, layout-editor.js,
// with its JSON beside it), what confirming it changes and the two-step confirmation. The v1 fuel types
// and the confirmed layout must describe the same fuelling options, so a draft that adds the first
// nozzle of an option (or removes the last one) cannot be confirmed alone: the diff says so and offers
// to confirm the draft together with the v1 fuel types that agree with it, in one request.
import { $, api, h } from './api.js';
import * as LayoutEditor from './layout-editor.js';

var PARTS = ['dispensers', 'nozzles', 'storages', 'products'];

var ctx = null; // stations.js's context: station(), say(), problemText(), when(), stationsChanged()
var layouts = null; // { confirmed, draft } of the open station
var fuelTypes = null; // the last diff's v1 fuel types against the draft
var withFuelTypes = null; // the v1 fuel types the confirmation carries (null: none)
var fixButton = null; // the diff's "Also add … to the v1 fuel types" (null: no conflict shown)

function path(rest) {
  return 'stations/' + encodeURIComponent(ctx.station().hrs_id) + '/layout' + rest;
}

function describeLayout(layout) {
  if (!layout) return 'None.';
  var lines = [];
  layout.dispensers.forEach(function (d) {
    lines.push('Dispenser ' + d.external_id + (d.is_certified ? ' (certified)' : ''));
    d.nozzles.forEach(function (n) {
      lines.push('  Nozzle ' + n.external_id + ' · ' + n.connector_type + ' · ' + n.vehicle_side + ' · ' + n.fuelling_options.join(', ') + (n.is_certified ? ' (certified)' : ''));
    });
  });
  layout.storages.forEach(function (s) {
    lines.push('Storage ' + s.external_id + ' · ' + s.nominal_capacity_kg + ' kg · dispensers ' + (s.dispenser_external_ids.join(', ') || '—'));
  });
  layout.products.forEach(function (p) {
    lines.push('Product ' + p.external_id + ' · ' + p.pressure_stage + ' bar · nozzles ' + (p.nozzle_external_ids.join(', ') || '—'));
  });
  return lines.join('\n');
}

export function load(context) {
  ctx = context;
  $('diff-box').hidden = true;
  api('GET', path('')).then(function (result) {
    if (result.status !== 200) return ctx.say(ctx.problemText(result), 'error');
    layouts = result.body;
    var confirmed = layouts.confirmed;
    $('layout-version').textContent = confirmed ? 'version ' + confirmed.version : '(none yet)';
    $('layout-confirmed').textContent = describeLayout(confirmed && confirmed.layout);
    $('layout-draft-state').textContent = layouts.draft ? 'saved ' + ctx.when(layouts.draft.created_at) : 'not saved yet: starts from the confirmed layout';
    var start = layouts.draft ? layouts.draft.layout : confirmed ? confirmed.layout : { dispensers: [], storages: [], products: [] };
    showDraft(JSON.parse(JSON.stringify(start)));
    $('draft-discard').disabled = !layouts.draft;
  });
}

/** "add 350car to", "remove 350car from", or both, for the fix's words. */
function fixWords(f) {
  var words = [];
  if (f.add.length > 0) words.push('add ' + f.add.join(' and ') + ' to');
  if (f.remove.length > 0) words.push('remove ' + f.remove.join(' and ') + ' from');
  return words.join(' and ') + ' the v1 fuel types';
}

function list(codes) {
  return codes.length > 0 ? codes.join(', ') : 'none';
}

/** Where the draft and the v1 fuel types disagree, with the fix: confirm both together. */
function fuelTypesConflict(f) {
  fixButton = h('button', { type: 'button', class: 'button', text: 'Also ' + fixWords(f) + '…' });
  fixButton.addEventListener('click', function () {
    ask(f.agreeing);
  });
  return h('section', { id: 'fuel-types-conflict', class: 'conflict', 'aria-labelledby': 'fuel-types-title' }, [
    h('h4', { id: 'fuel-types-title', text: 'The v1 fuel types disagree with this draft' }),
    h('ul', {}, f.contradictions.map(function (c) {
      return h('li', { text: c });
    })),
    h('p', { text: 'The v1 fuel types are ' + list(f.current) + '. They must describe the same fuelling options as the confirmed layout, so they ' +
      'change together with it: confirmed alone, this draft would be refused. Confirm both at once:' }),
    h('div', { class: 'actions' }, [fixButton]),
  ]);
}

function renderDiff(diff, f) {
  var box = $('diff-body');
  box.textContent = '';
  fuelTypes = f || null;
  withFuelTypes = null;
  fixButton = null;
  var conflict = !!(fuelTypes && fuelTypes.agreeing);
  $('confirm-really').hidden = true;
  $('confirm-step').hidden = conflict;
  if (diff.unchanged) box.appendChild(h('p', { class: 'muted', text: 'Confirming would change nothing.' }));
  // In the form's words: "~ N1: connector type CHSA → H70", under the part's heading ("Nozzles").
  PARTS.forEach(function (part) {
    var d = diff[part];
    var items = [];
    d.added.forEach(function (id) {
      items.push(h('li', { class: 'added', text: '+ ' + id + ' added' }));
    });
    d.removed.forEach(function (id) {
      items.push(h('li', { class: 'removed', text: '− ' + id + ' removed' }));
    });
    d.changed.forEach(function (c) {
      c.changes.forEach(function (change) {
        var field = LayoutEditor.FIELD_WORDS[change.field] || change.field;
        items.push(h('li', { class: 'changed', text: '~ ' + c.id + ': ' + field + ' ' + LayoutEditor.valueWords(change.field, change.before) + ' → ' + LayoutEditor.valueWords(change.field, change.after) }));
      });
    });
    if (items.length > 0) box.appendChild(h('section', { class: 'diff-part' }, [h('h4', { text: LayoutEditor.PART_WORDS[part][0] }), h('ul', {}, items)]));
  });
  if (conflict) box.appendChild(fuelTypesConflict(fuelTypes));
  $('diff-box').hidden = false;
}

/** The draft being edited: the form's object; the JSON box follows it until edited by hand. */
var draftModel = null;
var jsonEdited = false;

function syncJson() {
  $('layout-draft').value = JSON.stringify(draftModel, null, 2);
  jsonEdited = false;
}

function showDraft(model) {
  draftModel = model;
  LayoutEditor.render($('layout-form'), draftModel, syncJson);
  syncJson();
}

$('layout-draft').addEventListener('input', function () {
  jsonEdited = true;
});

/** The JSON box's text as the draft; undefined (and said) when it is not JSON. */
function draftFromJson() {
  try {
    return JSON.parse($('layout-draft').value);
  } catch (e) {
    ctx.say('The draft is not valid JSON: ' + e.message, 'error');
    return undefined;
  }
}

$('json-apply').addEventListener('click', function () {
  var parsed = draftFromJson();
  if (parsed && typeof parsed === 'object' && Array.isArray(parsed.dispensers) && Array.isArray(parsed.storages) && Array.isArray(parsed.products)) {
    showDraft(parsed);
    ctx.say('The form shows the JSON now.', 'ok');
  } else if (parsed !== undefined) {
    ctx.say('The form needs "dispensers", "storages" and "products" lists; save the draft to have the platform say what else is wrong.', 'error');
  }
});

/** What "Save draft" sends: the JSON box when edited by hand, else the form's draft. */
function draftFromEditor() {
  return jsonEdited ? draftFromJson() : draftModel;
}

$('draft-save').addEventListener('click', function () {
  var draft = draftFromEditor();
  if (draft === undefined) return;
  var problems = LayoutEditor.problems(draft);
  if (problems.length > 0) return ctx.say('Not saved: ' + problems.join(' ') , 'error');
  api('PUT', path('/draft'), draft).then(function (result) {
    if (result.status !== 200) return ctx.say(ctx.problemText(result), 'error');
    layouts.draft = result.body.draft;
    $('layout-draft-state').textContent = 'saved ' + ctx.when(result.body.draft.created_at);
    $('draft-discard').disabled = false;
    ctx.say('Draft saved. It is invisible to import and export until you confirm it.', 'ok');
    renderDiff(result.body.diff, result.body.v1_fuel_types);
  });
});

$('draft-diff').addEventListener('click', function () {
  api('GET', path('/diff')).then(function (result) {
    if (result.status !== 200) return ctx.say(ctx.problemText(result), 'error');
    renderDiff(result.body.diff, result.body.v1_fuel_types);
  });
});

$('draft-discard').addEventListener('click', function () {
  api('DELETE', path('/draft')).then(function (result) {
    if (result.status !== 204) return ctx.say(ctx.problemText(result), 'error');
    ctx.say('Draft discarded.', 'ok');
    load(ctx);
  });
});

/** The second step: what confirming does, with the v1 fuel types it sets (`v1`, or null for none). */
function ask(v1) {
  withFuelTypes = v1;
  var current = layouts && layouts.confirmed ? layouts.confirmed.version : 0;
  var also = v1 ? ' and its v1 fuel types become ' + list(v1) + ' (now ' + list(fuelTypes.current) + ')' : '';
  $('confirm-text').textContent =
    'The draft becomes the confirmed layout (version ' + (current + 1) + ') of ' + ctx.station().hrs_id + also +
    ', at once, for every signal and every data user. Confirm?';
  $('confirm-step').hidden = true;
  if (fixButton) fixButton.disabled = true;
  $('confirm-really').hidden = false;
  $('confirm-yes').focus();
}

function backToFirstStep() {
  $('confirm-really').hidden = true;
  if (fixButton) fixButton.disabled = false;
  $('confirm-step').hidden = !!(fuelTypes && fuelTypes.agreeing);
  withFuelTypes = null;
}

$('confirm-ask').addEventListener('click', function () {
  ask(null);
});

$('confirm-no').addEventListener('click', backToFirstStep);

$('confirm-yes').addEventListener('click', function () {
  var body = { expected_version: layouts && layouts.confirmed ? layouts.confirmed.version : 0 };
  if (withFuelTypes) body.v1_fuel_types = withFuelTypes;
  api('POST', path('/confirm'), body).then(function (result) {
    if (result.status !== 200) {
      backToFirstStep();
      return ctx.say(ctx.problemText(result), 'error');
    }
    var also = body.v1_fuel_types ? ' with the v1 fuel types ' + list(body.v1_fuel_types) : '';
    load(ctx);
    ctx.stationsChanged();
    ctx.say('Layout version ' + result.body.confirmed.version + ' confirmed' + also + ': it is in effect now.', 'ok');
  });
});


// The draft layout as a form: dispensers with their nozzles (id, connector, side, certification,
// fuelling options), storages (capacity, the dispensers they feed) and products (pressure, green share,
// the nozzles dispensing them), each added and removed in place. It edits a plain layout object in the
// registry file's shape and tells its owner (layout-pane.js) after every change; the API checks the
// result when it is saved, and `problems` what the API would let through but no nozzle can be (no
// fuelling option, no connector, no side). Every field has a visible label; its accessible name adds
// its place ("Dispenser 1, nozzle 2: id"), which stays true while the ids are typed. A new part starts
// empty: nothing ticked, nothing chosen. The fuelling options and the reference values of connectors
// and sides come from the server's vocabulary (src/domain/portal/nozzle-vocabulary.ts).
import { h } from './api.js';
import { CONNECTOR_TYPES, FUELLING_OPTIONS as OPTIONS, VEHICLE_SIDES } from './vocabulary.js';

/** A field with its visible label (`label`'s part after ": "); its accessible name is `label` whole. */
function field(label, input) {
  return h('label', { class: 'field-inline' }, [h('span', { class: 'field-name', text: label.split(': ').pop() }), input]);
}

/** A text field bound to `object[key]`. */
function text(label, object, key, changed, size) {
  var input = h('input', { type: 'text', 'aria-label': label, size: size || 8, spellcheck: 'false' });
  input.value = object[key] === null || object[key] === undefined ? '' : String(object[key]);
  input.addEventListener('input', function () {
    object[key] = input.value;
    changed();
  });
  return field(label, input);
}

/** A choice of `values` bound to `object[key]`; a stored value outside them stays, and an empty one asks for a choice. */
function choice(label, values, object, key, changed) {
  var current = object[key] || '';
  var all = current && values.indexOf(current) < 0 ? values.concat([current]) : values;
  var options = (current ? [] : [h('option', { value: '', text: 'Choose…', selected: true })]).concat(all.map(function (v) {
    return h('option', { value: v, text: v, selected: v === current });
  }));
  var select = h('select', { 'aria-label': label }, options);
  select.addEventListener('change', function () {
    object[key] = select.value;
    changed();
  });
  return field(label, select);
}

/** A number field bound to `object[key]` (empty: null when `nullable`, else 0). */
function number(label, object, key, changed, nullable) {
  var input = h('input', { type: 'number', 'aria-label': label, step: '0.01', min: '0', class: 'narrow-number' });
  input.value = object[key] === null || object[key] === undefined ? '' : String(object[key]);
  input.addEventListener('input', function () {
    object[key] = input.value === '' ? (nullable ? null : 0) : Number(input.value);
    changed();
  });
  return field(label, input);
}

function check(label, checked, onChange) {
  var input = h('input', { type: 'checkbox', 'aria-label': label });
  input.checked = checked;
  input.addEventListener('change', function () {
    onChange(input.checked);
  });
  return h('label', { class: 'check' }, [input, document.createTextNode(label.split(': ').pop())]);
}

/** Comma-separated ids bound to the list `object[key]`. */
function ids(label, object, key, changed) {
  var input = h('input', { type: 'text', 'aria-label': label + ' (ids, comma-separated)', size: 14, spellcheck: 'false' });
  input.value = object[key].join(', ');
  input.addEventListener('input', function () {
    object[key] = input.value.split(',').map(function (s) {
      return s.trim();
    }).filter(Boolean);
    changed();
  });
  return field(label + ' (ids, comma-separated)', input);
}

function button(label, onClick, className) {
  var b = h('button', { type: 'button', class: className || 'button button-quiet', text: label.split(' (')[0] , 'aria-label': label });
  b.addEventListener('click', onClick);
  return b;
}

/** One kind of part (storages, products): its rows, then a button that adds one (`onAdd`). */
function partList(legend, rows, addLabel, onAdd) {
  return h('fieldset', { class: 'part' }, [
    h('legend', { text: legend }),
    h('ul', { class: 'parts' }, rows),
    button(addLabel, onAdd, 'button button-secondary'),
  ]);
}

/**
 * The layout's parts and fields as the form labels them, for what confirming a draft changes
 * (layout-pane.js): the diff's field names (src/domain/layout-diff.ts) to the words beside the inputs.
 */
export var PART_WORDS = { dispensers: ['Dispensers', 'Dispenser'], nozzles: ['Nozzles', 'Nozzle'], storages: ['Storages', 'Storage'], products: ['Products', 'Product'] };
export var FIELD_WORDS = {
  is_certified: 'certified',
  dispenser: 'dispenser',
  connector_type: 'connector type',
  vehicle_side: 'vehicle side',
  fuelling_options: 'fuelling options',
  nominal_capacity_kg: 'capacity (kg)',
  dispenser_external_ids: 'dispensers',
  pressure_stage: 'pressure',
  green_hydrogen_share: 'green share (%)',
  nozzle_external_ids: 'nozzles',
};

/** A field's value as the form shows it: yes or no, a list or "none", 700 bar. */
export function valueWords(field, value) {
  if (value === null || value === undefined || value === '') return 'none';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.length > 0 ? value.join(', ') : 'none';
  if (field === 'pressure_stage') return value + ' bar';
  return String(value);
}

/**
 * Draws `layout` into `container`; `changed` is called after every edit. Adding or removing a part
 * draws it again; a part added has the focus on its id.
 */
export function render(container, layout, changed) {
  /** Draws again; `focus`: the accessible name of the field to focus then. */
  var redraw = function (focus) {
    render(container, layout, changed);
    changed();
    Array.prototype.forEach.call(container.querySelectorAll('input, select'), function (el) {
      if (focus && el.getAttribute('aria-label') === focus) el.focus();
    });
  };
  /** The button that removes `list[i]`, named by its place (`at`) and its id. */
  var remove = function (at, list, i) {
    var id = list[i].external_id;
    return button('Remove ' + at.toLowerCase() + (id ? ' (' + id + ')' : ''), function () {
      list.splice(i, 1);
      redraw();
    });
  };
  container.textContent = '';

  layout.dispensers.forEach(function (d, i) {
    var at = 'Dispenser ' + (i + 1);
    var nozzles = d.nozzles.map(function (n, j) {
      var nat = at + ', nozzle ' + (j + 1);
      var options = h('fieldset', { class: 'options' }, [h('legend', { text: 'Fuelling options' })].concat(OPTIONS.map(function (option) {
        return check(nat + ': ' + option, n.fuelling_options.indexOf(option) >= 0, function (on) {
          n.fuelling_options = OPTIONS.filter(function (o) {
            return o === option ? on : n.fuelling_options.indexOf(o) >= 0;
          });
          changed();
        });
      })));
      return h('li', { class: 'part-row' }, [
        text(nat + ': id', n, 'external_id', changed),
        choice(nat + ': connector type', CONNECTOR_TYPES, n, 'connector_type', changed),
        choice(nat + ': vehicle side', VEHICLE_SIDES, n, 'vehicle_side', changed),
        check(nat + ': certified', n.is_certified, function (on) {
          n.is_certified = on;
          changed();
        }),
        options,
        remove(nat, d.nozzles, j),
      ]);
    });
    container.appendChild(h('fieldset', { class: 'part' }, [
      h('legend', { text: at }),
      h('div', { class: 'part-row' }, [
        text(at + ': id', d, 'external_id', changed),
        check(at + ': certified', d.is_certified, function (on) {
          d.is_certified = on;
          changed();
        }),
        remove(at, layout.dispensers, i),
      ]),
      h('ul', { class: 'parts' }, nozzles),
      button('Add a nozzle to ' + at.toLowerCase(), function () {
        d.nozzles.push({ external_id: '', connector_type: '', vehicle_side: '', is_certified: false, fuelling_options: [] });
        redraw(at + ', nozzle ' + d.nozzles.length + ': id');
      }, 'button button-secondary'),
    ]));
  });
  container.appendChild(button('Add a dispenser', function () {
    layout.dispensers.push({ external_id: '', is_certified: false, nozzles: [] });
    redraw('Dispenser ' + layout.dispensers.length + ': id');
  }, 'button button-secondary'));

  var storages = layout.storages.map(function (s, i) {
    var at = 'Storage ' + (i + 1);
    return h('li', { class: 'part-row' }, [
      text(at + ': id', s, 'external_id', changed),
      number(at + ': capacity (kg)', s, 'nominal_capacity_kg', changed, false),
      ids(at + ': dispensers', s, 'dispenser_external_ids', changed),
      remove(at, layout.storages, i),
    ]);
  });
  container.appendChild(partList('Storages', storages, 'Add a storage', function () {
    layout.storages.push({ external_id: '', nominal_capacity_kg: 0, dispenser_external_ids: [] });
    redraw('Storage ' + layout.storages.length + ': id');
  }));

  var products = layout.products.map(function (p, i) {
    var at = 'Product ' + (i + 1);
    var pressure = h('select', { 'aria-label': at + ': pressure' }, [700, 350].map(function (bar) {
      return h('option', { value: bar, text: bar + ' bar', selected: p.pressure_stage === bar });
    }));
    pressure.addEventListener('change', function () {
      p.pressure_stage = Number(pressure.value);
      changed();
    });
    return h('li', { class: 'part-row' }, [
      text(at + ': id', p, 'external_id', changed),
      field(at + ': pressure', pressure),
      number(at + ': green share (%)', p, 'green_hydrogen_share', changed, true),
      ids(at + ': nozzles', p, 'nozzle_external_ids', changed),
      remove(at, layout.products, i),
    ]);
  });
  container.appendChild(partList('Products', products, 'Add a product', function () {
    layout.products.push({ external_id: '', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: [] });
    redraw('Product ' + layout.products.length + ': id');
  }));
}

/**
 * What no nozzle can be, though the registry file's schema lets it through: without a fuelling option,
 * a connector type or a vehicle side. One sentence per nozzle, naming it by its place and id.
 */
export function problems(layout) {
  var found = [];
  (Array.isArray(layout && layout.dispensers) ? layout.dispensers : []).forEach(function (d, i) {
    (Array.isArray(d && d.nozzles) ? d.nozzles : []).forEach(function (n, j) {
      var missing = [];
      if (!Array.isArray(n.fuelling_options) || n.fuelling_options.length === 0) missing.push('tick at least one fuelling option (' + OPTIONS.join(', ') + ')');
      if (!n.connector_type) missing.push('choose its connector type');
      if (!n.vehicle_side) missing.push('choose its vehicle side');
      if (missing.length > 0) {
        found.push('Dispenser ' + (i + 1) + ', nozzle ' + (j + 1) + (n.external_id ? ' (' + n.external_id + ')' : '') + ': ' + missing.join(', ') + '.');
      }
    });
  });
  return found;
}


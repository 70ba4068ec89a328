// The draft layout as a form: dispensers with their nozzles (id, connector, side, certification,
// fuelling options), storages (capacity, the dispensers they feed) and products (pressure, green share,
// the nozzles dispensing them), each added and removed in place. It edits a plain layout object in the
// registry file's shape and tells its owner (registry.js) after every change; the API checks the
// result when it is saved. Fields are labelled by position ("Dispenser 1, nozzle 2: id"), which stays
// true while the ids are typed.
(function () {
  'use strict';

  var OPTIONS = ['700ld', '350ld', '700hd', '350hd'];

  /** The page's element builder (portal.js). */
  var h = window.HrsPortal.h;

  /** A text field bound to `object[key]`. */
  function text(label, object, key, changed, size) {
    var input = h('input', { type: 'text', 'aria-label': label, placeholder: label.split(': ').pop(), size: size || 8, spellcheck: 'false' });
    input.value = object[key] === null || object[key] === undefined ? '' : String(object[key]);
    input.addEventListener('input', function () {
      object[key] = input.value;
      changed();
    });
    return input;
  }

  /** A number field bound to `object[key]` (empty: null when `nullable`, else 0). */
  function number(label, object, key, changed, nullable) {
    var input = h('input', { type: 'number', 'aria-label': label, step: '0.01', min: '0', class: 'narrow-number' });
    input.value = object[key] === null || object[key] === undefined ? '' : String(object[key]);
    input.addEventListener('input', function () {
      object[key] = input.value === '' ? (nullable ? null : 0) : Number(input.value);
      changed();
    });
    return input;
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
    var input = h('input', { type: 'text', 'aria-label': label, placeholder: 'ids, comma-separated', size: 14, spellcheck: 'false' });
    input.value = object[key].join(', ');
    input.addEventListener('input', function () {
      object[key] = input.value.split(',').map(function (s) {
        return s.trim();
      }).filter(Boolean);
      changed();
    });
    return input;
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
   * Draws `layout` into `container`; `changed` is called after every edit. Adding or removing a part
   * draws it again.
   */
  function render(container, layout, changed) {
    var redraw = function () {
      render(container, layout, changed);
      changed();
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
        var options = h('span', { class: 'options' }, OPTIONS.map(function (option) {
          return check(nat + ': ' + option, n.fuelling_options.indexOf(option) >= 0, function (on) {
            n.fuelling_options = OPTIONS.filter(function (o) {
              return o === option ? on : n.fuelling_options.indexOf(o) >= 0;
            });
            changed();
          });
        }));
        return h('li', { class: 'part-row' }, [
          text(nat + ': id', n, 'external_id', changed),
          text(nat + ': connector', n, 'connector_type', changed, 6),
          text(nat + ': side', n, 'vehicle_side', changed, 6),
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
          d.nozzles.push({ external_id: '', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] });
          redraw();
        }, 'button button-secondary'),
      ]));
    });
    container.appendChild(button('Add a dispenser', function () {
      layout.dispensers.push({ external_id: '', is_certified: true, nozzles: [] });
      redraw();
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
      redraw();
    }));

    var products = layout.products.map(function (p, i) {
      var at = 'Product ' + (i + 1);
      var pressure = h('select', { 'aria-label': at + ': pressure (bar)' }, [700, 350].map(function (bar) {
        return h('option', { value: bar, text: bar + ' bar', selected: p.pressure_stage === bar });
      }));
      pressure.addEventListener('change', function () {
        p.pressure_stage = Number(pressure.value);
        changed();
      });
      return h('li', { class: 'part-row' }, [
        text(at + ': id', p, 'external_id', changed),
        pressure,
        number(at + ': green share (%)', p, 'green_hydrogen_share', changed, true),
        ids(at + ': nozzles', p, 'nozzle_external_ids', changed),
        remove(at, layout.products, i),
      ]);
    });
    container.appendChild(partList('Products', products, 'Add a product', function () {
      layout.products.push({ external_id: '', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: [] });
      redraw();
    }));
  }

  window.HrsLayoutEditor = { render: render };
})();

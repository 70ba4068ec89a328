// A webhook subscription's settings as a form (webhooks.js uses it twice: to add one, and to change an
// open one): the endpoint's URL, the kinds of change as checkboxes in plain words, the stations and the
// area it is limited to (both optional) and a description. What the API refuses is said beside the field
// it is about: the problem body's `errors` per field, a refused address (`url_refused`), or a body the
// route's schema refused (`invalid_body`, its detail as `field: message; …`). The kinds (their words)
// and the fields come from the server's vocabulary.
import { h } from './api.js';
import { WEBHOOK_FIELDS as FIELDS, WEBHOOK_KINDS as KINDS } from './vocabulary.js';

var CORNERS = [
  { key: 'west', label: 'West (minimum longitude)', min: -180, max: 180 },
  { key: 'south', label: 'South (minimum latitude)', min: -90, max: 90 },
  { key: 'east', label: 'East (maximum longitude)', min: -180, max: 180 },
  { key: 'north', label: 'North (maximum latitude)', min: -90, max: 90 },
];

/** The kinds as a short list of their names ("Station status, Events"). */
export function kindWords(kinds) {
  return (kinds || [])
    .map(function (kind) {
      var known = KINDS.filter(function (k) {
        return k.value === kind;
      })[0];
      return known ? known.label : kind;
    })
    .join(', ');
}

function errorLine(id) {
  return h('p', { id: id, class: 'field-error', hidden: true });
}

/**
 * Fills `form` with the fields (ids under `prefix`) and a submit button; returns the form's handle:
 * fill(subscription), read() → { value } | { field, problem }, showProblems(result) → whether any
 * field was named, clear().
 */
export function build(form, prefix, submitText) {
  var id = function (name) {
    return prefix + '-' + name;
  };
  var url = h('input', { id: id('url'), type: 'url', inputmode: 'url', autocomplete: 'off', spellcheck: 'false', maxlength: '2000', required: true, 'aria-describedby': id('url-help') + ' ' + id('url-error') });
  var kindBoxes = KINDS.map(function (kind) {
    return h('input', { id: id('kind-' + kind.value), type: 'checkbox', value: kind.value, 'aria-describedby': id('kind-' + kind.value + '-help') });
  });
  var hrsIds = h('input', { id: id('hrs-ids'), type: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': id('hrs-ids-help') + ' ' + id('hrs_ids-error') });
  var corners = CORNERS.map(function (corner) {
    return h('input', { id: id('bbox-' + corner.key), type: 'number', step: 'any', min: corner.min, max: corner.max, inputmode: 'decimal', 'aria-describedby': id('bbox-help') + ' ' + id('bbox-error') });
  });
  var description = h('input', { id: id('description'), type: 'text', autocomplete: 'off', maxlength: '200', 'aria-describedby': id('description-error') });
  var submit = h('button', { id: id('submit'), class: 'button', type: 'submit', text: submitText });

  var kindsBox = h('fieldset', { class: 'kinds', 'aria-describedby': id('kinds-error') }, [h('legend', { text: 'What to send' })].concat(
    KINDS.map(function (kind, i) {
      return h('div', { class: 'kind' }, [
        h('label', { for: id('kind-' + kind.value), class: 'check' }, [kindBoxes[i], document.createTextNode(' ' + kind.label)]),
        h('span', { id: id('kind-' + kind.value + '-help'), class: 'help', text: kind.help }),
      ]);
    }),
    [errorLine(id('kinds-error'))],
  ));
  var bboxBox = h('fieldset', { class: 'bbox', 'aria-describedby': id('bbox-help') }, [
    h('legend', { text: 'Area (optional)' }),
    h('span', { id: id('bbox-help'), class: 'help', text: 'Only stations inside this box, in degrees (WGS 84); all four or none. A removed station is always sent.' }),
    h('div', { class: 'corners' }, CORNERS.map(function (corner, i) {
      return h('div', { class: 'corner' }, [h('label', { for: id('bbox-' + corner.key), text: corner.label }), corners[i]]);
    })),
    errorLine(id('bbox-error')),
  ]);
  [
    h('div', { class: 'field' }, [h('label', { for: id('url'), text: 'Endpoint URL' }), url, h('span', { id: id('url-help'), class: 'help', text: 'The HTTPS address the platform posts the changes to.' }), errorLine(id('url-error'))]),
    kindsBox,
    h('div', { class: 'field' }, [h('label', { for: id('hrs-ids'), text: 'Stations (optional)' }), hrsIds, h('span', { id: id('hrs-ids-help'), class: 'help', text: 'HRS ids separated by commas or spaces, e.g. BERAP, MUNCE. Empty: every station.' }), errorLine(id('hrs_ids-error'))]),
    bboxBox,
    h('div', { class: 'field' }, [h('label', { for: id('description'), text: 'Description (optional)' }), description, errorLine(id('description-error'))]),
    h('p', { id: id('message'), class: 'message', role: 'status', 'aria-live': 'polite', hidden: true }),
    h('div', { class: 'actions' }, [submit]),
  ].forEach(function (el) {
    form.appendChild(el);
  });

  /** The field's first control (where the focus goes when it is wrong). */
  var first = { url: url, kinds: kindBoxes[0], hrs_ids: hrsIds, bbox: corners[0], description: description };
  var controls = { url: [url], kinds: kindBoxes, hrs_ids: [hrsIds], bbox: corners, description: [description] };

  function setError(field, text) {
    var line = document.getElementById(id(field + '-error'));
    line.textContent = text || '';
    line.hidden = !text;
    controls[field].forEach(function (el) {
      if (text) el.setAttribute('aria-invalid', 'true');
      else el.removeAttribute('aria-invalid');
    });
  }

  function say(text, kind) {
    var el = document.getElementById(id('message'));
    el.textContent = text || '';
    el.dataset.kind = kind || 'info';
    el.hidden = !text;
  }

  function clear() {
    FIELDS.forEach(function (field) {
      setError(field, '');
    });
    say('');
  }

  function fill(sub) {
    clear();
    url.value = sub ? sub.url : '';
    kindBoxes.forEach(function (box) {
      box.checked = sub ? sub.kinds.indexOf(box.value) >= 0 : false;
    });
    hrsIds.value = sub && sub.hrs_ids ? sub.hrs_ids.join(', ') : '';
    corners.forEach(function (input, i) {
      input.value = sub && sub.bbox ? String(sub.bbox[i]) : '';
    });
    description.value = sub ? sub.description || '' : '';
  }

  /** The body the fields make, or the first field that is wrong and why (checked before the API is asked). */
  function read() {
    clear();
    var address = url.value.trim();
    if (!/^https?:\/\/\S+$/i.test(address)) return { field: 'url', problem: 'Enter the endpoint’s full address, beginning with “https:”.' };
    var kinds = kindBoxes.filter(function (box) {
      return box.checked;
    }).map(function (box) {
      return box.value;
    });
    if (kinds.length === 0) return { field: 'kinds', problem: 'Choose at least one kind of change to send.' };
    var ids = hrsIds.value.toUpperCase().split(/[\s,;]+/).filter(Boolean);
    var filled = corners.filter(function (input) {
      return input.value.trim() !== '';
    });
    if (filled.length > 0 && filled.length < 4) return { field: 'bbox', problem: 'Give all four edges of the area, or none.' };
    var bbox = null;
    if (filled.length === 4) {
      bbox = corners.map(function (input) {
        return Number(input.value);
      });
      var wrong = corners.filter(function (input, i) {
        return !input.checkValidity() || !Number.isFinite(bbox[i]);
      });
      if (wrong.length > 0) return { field: 'bbox', problem: 'Each edge is a number of degrees: longitudes from −180 to 180, latitudes from −90 to 90.' };
    }
    return { value: { url: address, kinds: kinds, hrs_ids: ids.length > 0 ? ids : null, bbox: bbox, description: description.value.trim() } };
  }

  /** Marks a field wrong, says why beside it, and puts the focus on it. */
  function refuse(field, problem) {
    setError(field, problem);
    first[field].focus();
  }

  /**
   * The API's refusal beside the fields it names (the focus on the first of them); what names no
   * field is said under the form, in `words` (the page's account of the refusal).
   */
  function showProblems(result, words) {
    var named = fieldProblems(result.body);
    var fields = FIELDS.filter(function (field) {
      return named[field];
    });
    fields.forEach(function (field) {
      setError(field, named[field]);
    });
    if (fields.length > 0) {
      first[fields[0]].focus();
      if (named[''] && named[''] !== named[fields[0]]) say(named[''], 'error');
      return;
    }
    say(words, 'error');
  }

  return { fill: fill, read: read, refuse: refuse, showProblems: showProblems, clear: clear, say: say, submit: submit, focus: function () { url.focus(); } };
}

/** The form's field a problem's field name is about ('bbox.2' → 'bbox', '/kinds/0' → 'kinds'), or ''. */
function fieldOf(name) {
  var top = String(name || '').replace(/^#?\/?/, '').split(/[./[]/)[0];
  if (top === 'hrs_id' || top === 'stations') top = 'hrs_ids';
  return FIELDS.indexOf(top) >= 0 ? top : '';
}

function add(found, field, text) {
  if (!text) return;
  found[field] = found[field] ? found[field] + ' ' + text : text;
}

/**
 * A problem body's words per field ({ url: '…', '': what names no field }): `errors` as an object of
 * field → message(s) or a list of { field | name | pointer | path, message | detail }; a refused
 * address is the URL's; an `invalid_body` detail is read as `field: message; …`.
 */
export function fieldProblems(body) {
  var found = {};
  if (!body || typeof body !== 'object') return found;
  var errors = body.errors;
  if (Array.isArray(errors)) {
    errors.forEach(function (e) {
      if (!e || typeof e !== 'object') return;
      var where = e.field || e.name || e.pointer || (Array.isArray(e.path) ? e.path.join('.') : e.path);
      add(found, fieldOf(where), e.message || e.detail || e.reason);
    });
  } else if (errors && typeof errors === 'object') {
    Object.keys(errors).forEach(function (key) {
      var text = Array.isArray(errors[key]) ? errors[key].join(' ') : errors[key];
      add(found, fieldOf(key), typeof text === 'string' ? text : '');
    });
  }
  var detail = typeof body.detail === 'string' ? body.detail : '';
  if (body.code === 'url_refused' && !found.url) add(found, 'url', detail);
  else if (body.code === 'invalid_body' && Object.keys(found).length === 0) {
    detail.split('; ').forEach(function (part) {
      var m = /^([^:\s]+): (.+)$/.exec(part);
      if (m && fieldOf(m[1])) add(found, fieldOf(m[1]), m[2]);
      else add(found, '', part);
    });
  } else if (!found['']) {
    add(found, '', detail);
  }
  return found;
}


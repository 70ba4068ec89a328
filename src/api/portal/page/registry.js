// The portal page's views for operator staff and originator managers, beside the API tokens page
// (portal.js): stations (record, layout with its diff and confirmation, events and the broadcast,
// photo, assignments, audit trail) and originators (import tokens, stations reported on, call log),
// through the JSON API under /portal/v1/. It shows its tabs once portal.js has signed the user in, for
// the roles the session names. Every text from the API is set with textContent; nothing is parsed as
// HTML. An import token's value is shown once and dropped when the view is left.
(function () {
  'use strict';

  var API = '/portal/v1/';
  var UNREACHABLE = 'The portal could not be reached. Check your connection and try again.';
  // The categories' names and v1, as SIGNAL_TYPES in src/registry/edit-rules.ts (src/domain/categories/).
  var SIGNAL_TYPES = ['availability', 'usage', 'hydrogen-storage', 'pricing', 'v1'];
  var PARTS = ['dispensers', 'nozzles', 'storages', 'products'];

  var $ = function (id) {
    return document.getElementById(id);
  };
  var body = document.body;
  var tabs = { '': $('ws-tokens-tab'), stations: $('ws-stations-tab'), originators: $('ws-originators-tab') };
  var spaces = { stations: $('ws-stations'), originators: $('ws-originators') };
  var dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

  var roles = null;
  var station = null; // { hrs_id, operator, ... } of the open station
  var layouts = null; // { confirmed, draft } of the open station
  var originator = null; // id of the open originator
  var callsNext = null;

  // --- the API and small helpers -------------------------------------------------------------------

  /** The page's API call and element builder (portal.js). */
  var api = window.HrsPortal.api;
  var h = window.HrsPortal.h;

  function problemText(result) {
    if (result.status === 0) return UNREACHABLE;
    if (result.body && typeof result.body.detail === 'string') return result.body.detail;
    return 'Something went wrong (HTTP ' + result.status + '). Try again later.';
  }

  function say(el, text, kind) {
    el.textContent = text || '';
    el.dataset.kind = kind || 'info';
    el.hidden = !text;
  }

  function when(iso) {
    return iso ? dateTime.format(new Date(iso)) : '—';
  }

  function segment(id) {
    return encodeURIComponent(id);
  }

  // --- workspaces ----------------------------------------------------------------------------------

  /**
   * Tells the page's router (router.js) what the user opened, as the address's path ('/stations/BERLA/layout'),
   * or the roles once known (null: signed out); the router gives each view its address.
   */
  function tell(name, detail) {
    document.dispatchEvent(new CustomEvent('hrs-portal:' + name, { detail: detail }));
  }

  /** Shows the tabs the roles allow once the user is on the tokens page (signed in). */
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
      $('workspaces').hidden = !operatorStaff && !manager;
      tell('roles', roles);
    });
  }

  /** Opens a workspace ('' is the API tokens page). */
  function open(name) {
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
  // What the router (router.js) opens when the address changes.
  window.HrsRegistry = {
    open: open,
    openStation: function (id, pane) {
      openStation(id, pane);
    },
    closeStation: function () {
      closeStation();
    },
    openOriginator: function (id) {
      openOriginator(id);
    },
    closeOriginator: function () {
      closeOriginator();
    },
  };
  onView();

  function pickList(list, items, label, onPick, selected) {
    list.textContent = '';
    items.forEach(function (item) {
      var button = h('button', { type: 'button', class: 'pick', 'data-id': item.id, 'aria-current': item.id === selected ? 'true' : null, text: label(item) });
      button.addEventListener('click', function () {
        Array.prototype.forEach.call(list.querySelectorAll('button'), function (b) {
          b.removeAttribute('aria-current');
        });
        button.setAttribute('aria-current', 'true');
        onPick(item.id);
      });
      list.appendChild(h('li', {}, [button]));
    });
  }

  // --- stations ------------------------------------------------------------------------------------

  var stationMessage = $('station-message');

  function loadStations() {
    api('GET', 'stations').then(function (result) {
      var stations = result.status === 200 ? result.body.stations : [];
      $('no-stations').hidden = stations.length > 0;
      pickList(
        $('station-list'),
        stations.map(function (s) {
          return { id: s.hrs_id, name: s.name, draft: s.has_draft };
        }),
        function (s) {
          return s.id + ' · ' + s.name + (s.draft ? ' (draft)' : '');
        },
        function (id) {
          openStation(id);
          tell('navigated', '/stations/' + segment(id));
        },
        station ? station.hrs_id : wantedStation,
      );
    });
  }

  /** The station asked for last (its answer may still be on its way). */
  var wantedStation = null;

  /** Opens a station on a pane ('record' when not named); the focus goes to its title, on a phone scrolled to. */
  function openStation(hrsId, pane) {
    pane = PANES.indexOf(pane) >= 0 ? pane : 'record';
    if (station && station.hrs_id === hrsId && !$('station-detail').hidden) return showPane(pane);
    wantedStation = hrsId;
    say(stationMessage, '');
    api('GET', 'stations/' + segment(hrsId)).then(function (result) {
      if (wantedStation !== hrsId) return;
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      station = result.body;
      $('station-detail').hidden = false;
      $('station-title').textContent = station.hrs_id + ' · ' + station.name;
      Array.prototype.forEach.call($('station-list').querySelectorAll('button'), function (b) {
        if (b.dataset.id === hrsId) b.setAttribute('aria-current', 'true');
        else b.removeAttribute('aria-current');
      });
      fillRecord(station);
      showPane(pane);
      $('station-title').focus();
    });
  }

  function closeStation() {
    station = null;
    wantedStation = null;
    $('station-detail').hidden = true;
    Array.prototype.forEach.call($('station-list').querySelectorAll('button'), function (b) {
      b.removeAttribute('aria-current');
    });
  }

  var PANES = ['record', 'layout', 'events', 'photo', 'assignments', 'audit', 'signals'];
  var LOADERS = { layout: loadLayout, events: loadEvents, photo: loadPhoto, assignments: loadAssignments, audit: loadAudit, signals: loadSignals };

  /** The station's signals, timeline and reliability (timeline.js). */
  function loadSignals() {
    window.HrsTimeline.show($('pane-signals'), 'stations/' + segment(station.hrs_id) + '/');
  }

  function showPane(name) {
    PANES.forEach(function (pane) {
      $('pane-' + pane).hidden = pane !== name;
    });
    Array.prototype.forEach.call(document.querySelectorAll('#station-detail .subtabs .tab'), function (tab) {
      tab.setAttribute('aria-pressed', String(tab.dataset.pane === name));
    });
    if (LOADERS[name]) LOADERS[name]();
  }

  Array.prototype.forEach.call(document.querySelectorAll('#station-detail .subtabs .tab'), function (tab) {
    tab.addEventListener('click', function () {
      say(stationMessage, '');
      showPane(tab.dataset.pane);
      tell('navigated', '/stations/' + segment(station.hrs_id) + '/' + tab.dataset.pane);
    });
  });

  // The record.
  var FUEL_TYPES = ['700car', '350car', '350bus'];

  function fillRecord(s) {
    $('record-name').value = s.name;
    $('record-heavy').checked = s.heavy_duty;
    $('record-hours').value = s.opening_hours || '';
    $('record-zone').value = s.time_zone || '';
    FUEL_TYPES.forEach(function (code) {
      $('record-' + code).checked = s.v1_fuel_types.indexOf(code) >= 0;
    });
    $('record-details').value = JSON.stringify(s.details, null, 2);
  }

  $('pane-record').addEventListener('submit', function (event) {
    event.preventDefault();
    var details;
    try {
      details = JSON.parse($('record-details').value || '{}');
    } catch (e) {
      return say(stationMessage, 'The AFIR details are not valid JSON: ' + e.message, 'error');
    }
    var record = {
      name: $('record-name').value,
      heavy_duty: $('record-heavy').checked,
      opening_hours: $('record-hours').value.trim() || null,
      time_zone: $('record-zone').value.trim() || null,
      details: details,
      v1_fuel_types: FUEL_TYPES.filter(function (code) {
        return $('record-' + code).checked;
      }),
    };
    api('PUT', 'stations/' + segment(station.hrs_id), record).then(function (result) {
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      station = result.body;
      fillRecord(station);
      $('station-title').textContent = station.hrs_id + ' · ' + station.name;
      say(stationMessage, 'Record saved.', 'ok');
    });
  });

  // The layout: the confirmed one, the draft (as JSON), its diff and its confirmation.
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

  function loadLayout() {
    $('diff-box').hidden = true;
    api('GET', 'stations/' + segment(station.hrs_id) + '/layout').then(function (result) {
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      layouts = result.body;
      var confirmed = layouts.confirmed;
      $('layout-version').textContent = confirmed ? 'version ' + confirmed.version : '(none yet)';
      $('layout-confirmed').textContent = describeLayout(confirmed && confirmed.layout);
      $('layout-draft-state').textContent = layouts.draft ? 'saved ' + when(layouts.draft.created_at) : 'not saved yet: starts from the confirmed layout';
      var start = layouts.draft ? layouts.draft.layout : confirmed ? confirmed.layout : { dispensers: [], storages: [], products: [] };
      showDraft(JSON.parse(JSON.stringify(start)));
      $('draft-discard').disabled = !layouts.draft;
    });
  }

  function renderDiff(diff) {
    var box = $('diff-body');
    box.textContent = '';
    $('confirm-really').hidden = true;
    $('confirm-step').hidden = false;
    if (diff.unchanged) box.appendChild(h('p', { class: 'muted', text: 'Confirming would change nothing.' }));
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
          items.push(h('li', { class: 'changed', text: '~ ' + c.id + ': ' + change.field + ' ' + JSON.stringify(change.before) + ' → ' + JSON.stringify(change.after) }));
        });
      });
      if (items.length > 0) box.appendChild(h('section', { class: 'diff-part' }, [h('h4', { text: part }), h('ul', {}, items)]));
    });
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
    window.HrsLayoutEditor.render($('layout-form'), draftModel, syncJson);
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
      say(stationMessage, 'The draft is not valid JSON: ' + e.message, 'error');
      return undefined;
    }
  }

  $('json-apply').addEventListener('click', function () {
    var parsed = draftFromJson();
    if (parsed && typeof parsed === 'object' && Array.isArray(parsed.dispensers) && Array.isArray(parsed.storages) && Array.isArray(parsed.products)) {
      showDraft(parsed);
      say(stationMessage, 'The form shows the JSON now.', 'ok');
    } else if (parsed !== undefined) {
      say(stationMessage, 'The form needs "dispensers", "storages" and "products" lists; save the draft to have the platform say what else is wrong.', 'error');
    }
  });

  /** What "Save draft" sends: the JSON box when edited by hand, else the form's draft. */
  function draftFromEditor() {
    return jsonEdited ? draftFromJson() : draftModel;
  }

  $('draft-save').addEventListener('click', function () {
    var draft = draftFromEditor();
    if (draft === undefined) return;
    api('PUT', 'stations/' + segment(station.hrs_id) + '/layout/draft', draft).then(function (result) {
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      layouts.draft = result.body.draft;
      $('layout-draft-state').textContent = 'saved ' + when(result.body.draft.created_at);
      $('draft-discard').disabled = false;
      say(stationMessage, 'Draft saved. It is invisible to import and export until you confirm it.', 'ok');
      renderDiff(result.body.diff);
    });
  });

  $('draft-diff').addEventListener('click', function () {
    api('GET', 'stations/' + segment(station.hrs_id) + '/layout/diff').then(function (result) {
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      renderDiff(result.body.diff);
    });
  });

  $('draft-discard').addEventListener('click', function () {
    api('DELETE', 'stations/' + segment(station.hrs_id) + '/layout/draft').then(function (result) {
      if (result.status !== 204) return say(stationMessage, problemText(result), 'error');
      say(stationMessage, 'Draft discarded.', 'ok');
      loadLayout();
    });
  });

  $('confirm-ask').addEventListener('click', function () {
    var current = layouts && layouts.confirmed ? layouts.confirmed.version : 0;
    $('confirm-text').textContent =
      'The draft becomes the confirmed layout (version ' + (current + 1) + ') of ' + station.hrs_id +
      ' at once, for every signal and every data user. Confirm?';
    $('confirm-step').hidden = true;
    $('confirm-really').hidden = false;
    $('confirm-yes').focus();
  });

  $('confirm-no').addEventListener('click', function () {
    $('confirm-really').hidden = true;
    $('confirm-step').hidden = false;
  });

  $('confirm-yes').addEventListener('click', function () {
    var expected = layouts && layouts.confirmed ? layouts.confirmed.version : 0;
    api('POST', 'stations/' + segment(station.hrs_id) + '/layout/confirm', { expected_version: expected }).then(function (result) {
      if (result.status !== 200) {
        $('confirm-really').hidden = true;
        $('confirm-step').hidden = false;
        return say(stationMessage, problemText(result), 'error');
      }
      loadLayout();
      loadStations();
      say(stationMessage, 'Layout version ' + result.body.confirmed.version + ' confirmed: it is in effect now.', 'ok');
    });
  });

  // Events.
  function loadEvents() {
    api('GET', 'stations/' + segment(station.hrs_id) + '/events').then(function (result) {
      var rows = $('event-rows');
      rows.textContent = '';
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      var now = Date.now();
      result.body.events.forEach(function (e) {
        var running = Date.parse(e.starts_at) <= now && (!e.ends_at || Date.parse(e.ends_at) > now);
        var end = running
          ? h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'End the event ' + e.id + ' now', text: 'End now', onclick: function () {
              api('POST', 'stations/' + segment(station.hrs_id) + '/events/' + segment(e.id) + '/end').then(function (r) {
                if (r.status !== 200) return say(stationMessage, problemText(r), 'error');
                say(stationMessage, 'Event ended.', 'ok');
                loadEvents();
              });
            } })
          : null;
        var edit = h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Change the event ' + e.id, text: 'Change', onclick: function () {
          editEvent(e);
        } });
        rows.appendChild(h('tr', {}, [
          h('td', { text: e.kind }), h('td', { text: when(e.starts_at) }), h('td', { text: when(e.ends_at) }), h('td', { text: e.description }), h('td', {}, [edit, end]),
        ]));
      });
    });
  }

  function isoFromLocal(value) {
    return value ? new Date(value).toISOString() : null;
  }

  /** `yyyy-mm-ddThh:mm` in the browser's zone, as a datetime-local field takes it. */
  function localFromIso(iso) {
    if (!iso) return '';
    var d = new Date(iso);
    var pad = function (n) {
      return String(n).padStart(2, '0');
    };
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' + pad(d.getHours()) + ':' + pad(d.getMinutes());
  }

  /** The event being changed through the form (null: the form announces a new one). */
  var editing = null;

  function editEvent(e) {
    editing = e.id;
    $('event-kind').value = e.kind;
    $('event-starts').value = localFromIso(e.starts_at);
    $('event-ends').value = localFromIso(e.ends_at);
    $('event-description').value = e.description;
    $('event-broadcast').checked = false;
    $('event-broadcast').disabled = true;
    $('event-submit').textContent = 'Save changes';
    $('event-kind').focus();
  }

  function resetEventForm() {
    editing = null;
    $('event-form').reset();
    $('event-broadcast').disabled = false;
    $('event-submit').textContent = 'Announce';
  }

  $('event-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var starts = isoFromLocal($('event-starts').value);
    if (!starts) return say(stationMessage, 'When does the event start?', 'error');
    var announced = { kind: $('event-kind').value, starts_at: starts, ends_at: isoFromLocal($('event-ends').value), description: $('event-description').value };
    if (editing) {
      return api('PATCH', 'stations/' + segment(station.hrs_id) + '/events/' + segment(editing), announced).then(function (result) {
        if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
        say(stationMessage, 'Event changed.', 'ok');
        resetEventForm();
        loadEvents();
      });
    }
    var broadcast = $('event-broadcast').checked;
    var path = broadcast ? 'operators/' + segment(station.operator) + '/events' : 'stations/' + segment(station.hrs_id) + '/events';
    api('POST', path, announced).then(function (result) {
      if (result.status !== 201) return say(stationMessage, problemText(result), 'error');
      say(stationMessage, broadcast ? 'Announced on ' + result.body.hrs_ids.join(', ') + '.' : 'Event announced.', 'ok');
      resetEventForm();
      loadEvents();
    });
  });

  // The photo.
  function loadPhoto() {
    var img = $('photo-img');
    img.hidden = !station.photo;
    $('no-photo').hidden = !!station.photo;
    $('photo-remove').disabled = !station.photo;
    if (station.photo) img.src = API + 'stations/' + segment(station.hrs_id) + '/photo?v=' + station.photo.sha256;
  }

  function refreshStation() {
    return api('GET', 'stations/' + segment(station.hrs_id)).then(function (result) {
      if (result.status === 200) station = result.body;
    });
  }

  $('photo-upload').addEventListener('click', function () {
    var file = $('photo-file').files[0];
    if (!file) return say(stationMessage, 'Choose an image first.', 'error');
    api('PUT', 'stations/' + segment(station.hrs_id) + '/photo', file).then(function (result) {
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      say(stationMessage, 'Photo stored.', 'ok');
      refreshStation().then(loadPhoto);
    });
  });

  $('photo-remove').addEventListener('click', function () {
    api('DELETE', 'stations/' + segment(station.hrs_id) + '/photo').then(function (result) {
      if (result.status !== 204) return say(stationMessage, problemText(result), 'error');
      say(stationMessage, 'Photo removed.', 'ok');
      refreshStation().then(loadPhoto);
    });
  });

  // Assignments: originators × signal types, a choice per cell.
  function loadAssignments() {
    api('GET', 'stations/' + segment(station.hrs_id) + '/assignments').then(function (result) {
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      var head = $('assignment-head');
      var rows = $('assignment-rows');
      head.textContent = '';
      rows.textContent = '';
      head.appendChild(h('tr', {}, [h('th', { scope: 'col', text: 'Originator' })].concat(SIGNAL_TYPES.map(function (type) {
        return h('th', { scope: 'col', text: type });
      }))));
      var state = {};
      result.body.assignments.forEach(function (a) {
        state[a.originator + ' ' + a.signal_type] = a.state;
      });
      result.body.originators.forEach(function (o) {
        rows.appendChild(h('tr', {}, [h('th', { scope: 'row', text: o.name + ' (' + o.id + ')' })].concat(SIGNAL_TYPES.map(function (type) {
          var choices = type === 'v1' ? ['none', 'live', 'testing', 'inactive'] : ['none', 'live', 'testing'];
          var current = state[o.id + ' ' + type] || 'none';
          var select = h('select', { 'aria-label': o.id + ' ' + type }, choices.map(function (c) {
            return h('option', { value: c, text: c, selected: c === current });
          }));
          select.addEventListener('change', function () {
            var wanted = select.value;
            api('PUT', 'stations/' + segment(station.hrs_id) + '/assignments/' + segment(o.id) + '/' + type, { state: wanted }).then(function (r) {
              if (r.status !== 200) {
                select.value = current;
                return say(stationMessage, problemText(r), 'error');
              }
              current = wanted;
              say(stationMessage, o.id + ' is now ' + wanted + ' for ' + type + ' at ' + station.hrs_id + '.', 'ok');
            });
          });
          return h('td', {}, [select]);
        }))));
      });
    });
  }

  // The audit trail.
  function auditLine(e) {
    var what = e.action + (e.subject ? ' ' + e.subject : '') + (e.originator_id ? ' (' + e.originator_id + ')' : '');
    return h('li', {}, [h('span', { class: 'muted', text: when(e.at) + ' · ' + e.actor + ' · ' }), h('span', { text: what })]);
  }

  function loadAudit() {
    api('GET', 'stations/' + segment(station.hrs_id) + '/audit?limit=100').then(function (result) {
      var list = $('audit-rows');
      list.textContent = '';
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      result.body.entries.forEach(function (e) {
        list.appendChild(auditLine(e));
      });
      if (result.body.entries.length === 0) list.appendChild(h('li', { class: 'muted', text: 'No changes recorded yet.' }));
    });
  }

  // --- originators ---------------------------------------------------------------------------------

  var originatorMessage = $('originator-message');

  function loadOriginators() {
    api('GET', 'originators').then(function (result) {
      var items = result.status === 200 ? result.body.originators : [];
      pickList($('originator-list'), items, function (o) {
        return o.name + ' (' + o.id + ')';
      }, function (id) {
        openOriginator(id);
        tell('navigated', '/originators/' + segment(id));
      }, originator);
    });
  }

  function closeOriginator() {
    originator = null;
    forgetImportValue();
    $('originator-detail').hidden = true;
    Array.prototype.forEach.call($('originator-list').querySelectorAll('button'), function (b) {
      b.removeAttribute('aria-current');
    });
  }

  function openOriginator(id) {
    if (originator === id && !$('originator-detail').hidden) return;
    originator = id;
    forgetImportValue();
    say(originatorMessage, '');
    api('GET', 'originators/' + segment(id)).then(function (result) {
      if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
      if (originator !== id) return;
      $('originator-detail').hidden = false;
      $('originator-title').textContent = result.body.name + ' (' + result.body.id + ') · call log: ' + result.body.call_log_mode;
      Array.prototype.forEach.call($('originator-list').querySelectorAll('button'), function (b) {
        if (b.dataset.id === id) b.setAttribute('aria-current', 'true');
        else b.removeAttribute('aria-current');
      });
      $('originator-title').focus();
      var rows = $('reported-rows');
      rows.textContent = '';
      $('reported-signals').hidden = true;
      result.body.stations.forEach(function (s) {
        var states = Object.keys(s.assignments).map(function (type) {
          return type + ': ' + s.assignments[type];
        });
        var open = h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Signals of ' + s.hrs_id, text: 'Signals', onclick: function () {
          $('reported-signals').hidden = false;
          $('reported-signals-title').textContent = 'Signals of ' + s.hrs_id + ' · ' + s.name;
          window.HrsTimeline.show($('reported-signals-body'), 'originators/' + segment(id) + '/stations/' + segment(s.hrs_id) + '/');
          $('reported-signals-title').focus();
        } });
        rows.appendChild(h('tr', { 'data-hrs-id': s.hrs_id }, [h('td', { text: s.hrs_id + ' · ' + s.name }), h('td', { text: states.join(', ') }), h('td', {}, [open])]));
      });
      loadOriginatorFigures(id);
      loadImportTokens();
      callsNext = null;
      $('call-rows').textContent = '';
      loadCalls('originators/' + segment(id) + '/call-logs?limit=50');
    });
  }

  /** The originator's reliability: last signal, error rate, shares per category over its stations. */
  function loadOriginatorFigures(id) {
    var box = $('originator-figures');
    box.textContent = '';
    api('GET', 'originators/' + segment(id) + '/reliability?period=7d').then(function (result) {
      if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
      var f = result.body;
      var pct = function (x) {
        return x === null ? '—' : (x * 100).toFixed(1) + ' %';
      };
      var rows = [
        h('tr', { 'data-figure': 'last-signal' }, [h('th', { scope: 'row', text: 'Last signal received' }), h('td', { text: when(f.last_signal_received) })]),
        h('tr', { 'data-figure': 'error-rate' }, [h('th', { scope: 'row', text: 'Import calls refused (7 days)' }), h('td', { text: f.calls.rejected + ' of ' + f.calls.total + ' · ' + pct(f.calls.error_rate) })]),
      ];
      Object.keys(f.categories).forEach(function (key) {
        var c = f.categories[key];
        if (c.stations === 0) return;
        rows.push(h('tr', { 'data-figure': key }, [
          h('th', { scope: 'row', text: key.replace('_', ' ') + ' (' + c.stations + ' stations)' }),
          h('td', { text: 'fresh ' + pct(c.shares.fresh) + ' · stale ' + pct(c.shares.stale) + ' · unknown ' + pct(c.shares.unknown) + ' · ' + c.gaps + ' gaps' }),
        ]));
      });
      box.appendChild(h('table', { class: 'grid-table' }, [h('tbody', {}, rows)]));
    });
  }

  function loadImportTokens() {
    api('GET', 'originators/' + segment(originator) + '/tokens').then(function (result) {
      var rows = $('import-rows');
      rows.textContent = '';
      if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
      result.body.tokens.forEach(function (token) {
        var revoke = token.state === 'active'
          ? h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Revoke ' + token.name, text: 'Revoke', onclick: function () {
              api('POST', 'originators/' + segment(originator) + '/tokens/' + segment(token.id) + '/revoke').then(function (r) {
                if (r.status !== 200) return say(originatorMessage, problemText(r), 'error');
                say(originatorMessage, 'Token “' + token.name + '” revoked: it is refused from now on.', 'ok');
                loadImportTokens();
              });
            } })
          : null;
        rows.appendChild(h('tr', { 'data-state': token.state }, [
          h('td', { text: token.name || '(no name)' }),
          h('td', { text: token.generation === 'import_v2' ? 'Import v2' : 'Import v1/v1.1' }),
          h('td', { class: 'mono', text: token.hint ? '…' + token.hint : '—' }),
          h('td', { text: when(token.expires_at) }),
          h('td', { text: when(token.last_used_at) }),
          h('td', { text: token.state }),
          h('td', {}, [revoke]),
        ]));
      });
    });
  }

  function forgetImportValue() {
    $('import-value').textContent = '';
    $('import-created').hidden = true;
  }

  $('import-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var name = $('import-name').value.trim();
    if (!name) return say(originatorMessage, 'Give the token a name.', 'error');
    var expires = $('import-expires').value;
    var wanted = { generation: $('import-generation').value, name: name };
    if (expires) wanted.expires_at = new Date(expires + 'T12:00:00').toISOString();
    api('POST', 'originators/' + segment(originator) + '/tokens', wanted).then(function (result) {
      if (result.status !== 201) return say(originatorMessage, problemText(result), 'error');
      $('import-value').textContent = result.body.value;
      $('import-created').hidden = false;
      $('import-form').reset();
      say(originatorMessage, 'Token “' + result.body.token.name + '” created.', 'ok');
      loadImportTokens();
    });
  });

  $('import-copy').addEventListener('click', function () {
    var value = $('import-value').textContent;
    if (!navigator.clipboard) return say(originatorMessage, 'Select the value and copy it.', 'info');
    navigator.clipboard.writeText(value).then(
      function () {
        say(originatorMessage, 'Copied.', 'ok');
      },
      function () {
        say(originatorMessage, 'Copying was not allowed: select the value and copy it.', 'info');
      },
    );
  });

  $('import-done').addEventListener('click', forgetImportValue);

  function loadCalls(path) {
    api('GET', path).then(function (result) {
      if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
      var list = $('call-rows');
      result.body.call_logs.forEach(function (c) {
        list.appendChild(h('li', {}, [h('span', { class: 'muted', text: when(c.request_time) + ' · ' + c.status + ' · ' }), h('span', { text: c.endpoint })]));
      });
      if (list.children.length === 0) list.appendChild(h('li', { class: 'muted', text: 'No calls recorded (the call-log mode decides which are kept).' }));
      callsNext = result.body.next;
      $('calls-more').hidden = !callsNext;
    });
  }

  $('calls-more').addEventListener('click', function () {
    if (callsNext) loadCalls(callsNext.replace(API, ''));
  });
})();

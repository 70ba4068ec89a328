// The portal page's views for operator staff and originator managers, beside the API tokens page
// (portal.js): stations (record, photo, assignments, audit trail; the layout with its diff and
// confirmation in layout-pane.js, the events and the broadcast in station-events.js) and originators
// (import tokens, stations reported on, call log), through the JSON API under /portal/v1/. It shows its tabs once portal.js has signed the user in, for
// the roles the session names. Every text from the API is set with textContent; nothing is parsed as
// HTML. An import token's value is shown once and dropped when the view is left.
(function () {
  'use strict';

  var API = '/portal/v1/';
  var UNREACHABLE = 'The portal could not be reached. Check your connection and try again.';
  // The categories' names and v1, as SIGNAL_TYPES in src/registry/edit-rules.ts (src/domain/categories/).
  var SIGNAL_TYPES = ['availability', 'usage', 'hydrogen-storage', 'pricing', 'v1'];

  var $ = function (id) {
    return document.getElementById(id);
  };
  var body = document.body;
  var tabs = { '': $('ws-tokens-tab'), webhooks: $('ws-webhooks-tab'), stations: $('ws-stations-tab'), originators: $('ws-originators-tab') };
  var spaces = { webhooks: $('ws-webhooks'), stations: $('ws-stations'), originators: $('ws-originators') };
  var dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

  var roles = null;
  var station = null; // { hrs_id, operator, ... } of the open station
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

  /** Opens a workspace ('' is the API tokens page); the webhooks' (webhooks.js) drops what it shows once left. */
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
    if (name === 'webhooks') window.HrsWebhooks.show();
    else window.HrsWebhooks.leave();
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
      if (result.status === 422 && result.body && result.body.code === 'layout_contradiction') {
        return say(stationMessage, problemText(result) + '. A nozzle and its v1 fuel type change together: change the draft on the Layout tab, ' +
          'and its confirmation offers to set the v1 fuel types with it.', 'error');
      }
      if (result.status !== 200) return say(stationMessage, problemText(result), 'error');
      station = result.body;
      fillRecord(station);
      $('station-title').textContent = station.hrs_id + ' · ' + station.name;
      say(stationMessage, 'Record saved.', 'ok');
    });
  });

  // The layout (layout-pane.js) and the events (station-events.js): they ask for the open station.
  var paneContext = {
    station: function () {
      return station;
    },
    say: function (text, kind) {
      say(stationMessage, text, kind);
    },
    problemText: problemText,
    when: when,
    /** A confirmation may change the record too (its v1 fuel types): the list and the record follow. */
    stationsChanged: function () {
      loadStations();
      refreshStation().then(function () {
        fillRecord(station);
      });
    },
  };

  function loadLayout() {
    window.HrsLayoutPane.load(paneContext);
  }

  function loadEvents() {
    window.HrsStationEvents.load(paneContext);
  }

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
          return h('td', { 'data-label': type }, [select]);
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
        rows.appendChild(h('tr', { 'data-hrs-id': s.hrs_id }, [h('td', { 'data-label': 'Station', text: s.hrs_id + ' · ' + s.name }), h('td', { 'data-label': 'Assignments', text: states.join(', ') }), h('td', {}, [open])]));
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
      var hour = 3600000;
      if (result.status === 503) return window.HrsTimeline.noCompleteHour(box, Math.floor(Date.now() / hour) * hour + hour);
      if (result.status !== 200) return say(originatorMessage, problemText(result), 'error');
      var f = result.body;
      // Signals received, none within a complete hour yet: the figures would read nothing but unknown.
      var counted = Object.keys(f.categories).some(function (key) {
        return f.categories[key].stations > 0;
      });
      if (f.last_signal_received !== null && !counted) return window.HrsTimeline.noCompleteHour(box, Date.parse(f.to) + hour);
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
          h('td', { 'data-label': 'Name', text: token.name || '(no name)' }),
          h('td', { 'data-label': 'API', text: token.generation === 'import_v2' ? 'Import v2' : 'Import v1/v1.1' }),
          h('td', { 'data-label': 'Token', class: 'mono', text: token.hint ? '…' + token.hint : '—' }),
          h('td', { 'data-label': 'Expires', text: when(token.expires_at) }),
          h('td', { 'data-label': 'Last used', text: when(token.last_used_at) }),
          h('td', { 'data-label': 'State', text: token.state }),
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

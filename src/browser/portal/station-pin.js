// The station's pin on the record form: a small map of the built-in basemap (the public map's style,
// /map/style.js, with MapLibre from /map/vendor/), the pin where the Latitude and Longitude fields say.
// Dragging the pin, or clicking the map, writes its position into those fields (5 decimals, about a
// metre); typing in them moves the pin. Beside the map, the nearest town from the platform's place data
// (GET /map/v1/places/nearest), to check the pin against the address. The fields stay the way to give
// the position without a pointer; the map is loaded the first time the record is shown, and where the
// public map is turned off (PUBLIC_MAP=false) the form says so and keeps its fields.
import { $ } from './api.js';
import { numberIn } from './registry-parts.js';

var pin = null; // { map, marker, maplibre } once loaded
var loading = null;
var asked = 0; // the last nearest-town request (an older answer is dropped)

/** The coordinates the fields hold, or null when either is empty or no number. */
function fieldPosition() {
  var lat = numberIn('record-lat');
  var lon = numberIn('record-lon');
  return Math.abs(lat) <= 90 && Math.abs(lon) <= 180 ? { lat: lat, lon: lon } : null;
}

function round(value) {
  return String(Math.round(value * 1e5) / 1e5);
}

function nearest(position) {
  var note = $('record-place');
  if (!position) {
    note.textContent = 'Place the pin: click the map or give the coordinates.';
    return;
  }
  var mine = ++asked;
  fetch('/map/v1/places/nearest?lat=' + position.lat + '&lon=' + position.lon).then(function (res) {
    return res.json().then(function (body) {
      if (mine !== asked) return;
      if (res.status === 404) note.textContent = 'No town or village within 50 km of the pin.';
      else if (!res.ok) note.textContent = body.detail || 'The nearest town could not be found.';
      else note.textContent = 'Pin near ' + body.name + ', ' + body.country + ' (' + body.distance_km.toLocaleString('en') + ' km).';
    });
  }).catch(function () {
    if (mine === asked) note.textContent = 'The nearest town could not be found.';
  });
}

/** Puts the pin where the fields say (the map follows), and names the nearest town. */
function follow(move) {
  var position = fieldPosition();
  nearest(position);
  if (!pin) return;
  if (!position) {
    pin.marker.remove();
    return;
  }
  pin.marker.setLngLat([position.lon, position.lat]).addTo(pin.map);
  if (move) pin.map.jumpTo({ center: [position.lon, position.lat], zoom: Math.max(pin.map.getZoom(), 11) });
}

/** The pin moved (dragged, or the map clicked): the fields take its position. */
function placed(lngLat) {
  $('record-lat').value = round(lngLat.lat);
  $('record-lon').value = round(lngLat.lng);
  $('record-lat').dispatchEvent(new Event('input', { bubbles: true }));
  nearest(fieldPosition());
}

function load() {
  loading = loading || Promise.all([
    import('../map/vendor/maplibre-gl.mjs'),
    import('../map/style.js'),
    fetch('/map/v1/config').then(function (res) {
      if (!res.ok) throw new Error('no map');
      return res.json();
    }),
  ]).then(function (loaded) {
    var maplibre = loaded[0];
    var settings = loaded[2];
    var sheet = new URL('../map/vendor/maplibre-gl.css', import.meta.url).href;
    if (!document.querySelector('link[rel="stylesheet"][href="' + sheet + '"]')) {
      document.head.appendChild(Object.assign(document.createElement('link'), { rel: 'stylesheet', href: sheet }));
    }
    var container = $('record-map');
    container.hidden = false;
    var position = fieldPosition();
    var map = new maplibre.Map({
      container: container,
      style: settings.style_url || loaded[1].builtInStyle(settings.font_faces),
      center: position ? [position.lon, position.lat] : [10.4, 51.2],
      zoom: position ? 11 : 4.5,
      attributionControl: false,
      dragRotate: false,
      pitchWithRotate: false,
      cooperativeGestures: false,
    });
    map.addControl(new maplibre.NavigationControl({ showCompass: false }), 'top-right');
    map.addControl(new maplibre.AttributionControl({ compact: true }), 'bottom-right');
    var marker = new maplibre.Marker({ draggable: true, color: '#1f4e79' });
    marker.getElement().setAttribute('aria-label', 'The station\'s pin: drag it to where the station stands');
    marker.on('dragend', function () {
      placed(marker.getLngLat());
    });
    map.on('click', function (event) {
      marker.setLngLat(event.lngLat).addTo(map);
      placed(event.lngLat);
    });
    map.on('idle', function () {
      container.dataset.idle = 'true';
    });
    map.on('movestart', function () {
      container.dataset.idle = 'false';
    });
    pin = { map: map, marker: marker };
    follow(false);
  }).catch(function () {
    $('record-map').hidden = true;
    $('record-place').textContent = 'No map here (the public map is turned off on this platform): give the coordinates in the fields.';
  });
  return loading;
}

/** The record form shows a station: its pin (the map loaded the first time). */
export function show() {
  if (!pin) {
    nearest(fieldPosition());
    load();
    return;
  }
  pin.map.resize();
  follow(true);
}

['record-lat', 'record-lon'].forEach(function (id) {
  $(id).addEventListener('change', function () {
    follow(true);
  });
});

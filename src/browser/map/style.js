/**
 * The built-in basemap's MapLibre style, shared by the public map (map.js) and the portal's pin on a
 * station's record (src/browser/portal/station-pin.js): Natural Earth's land, coastline and borders
 * (`/map/v1/basemap.geojson`) and GeoNames' place names (`/map/v1/places/{z}/{x}/{y}`) in Noto Sans,
 * all from the platform.
 */
const absolute = (path) => new URL(path, location.href).href;

/**
 * The built-in style: sea, land, coastline, borders and place names; nothing is fetched from elsewhere.
 * Each place's tile says from which zoom it shows (the server thins them), its `kind` sets the label's
 * size and colour and its `rank` which label gives way when two would overlap.
 *
 * @param fontFaces the settings' `font_faces`: the labels' font files by the ranges each covers
 * @param options.places false: without the place names (the public map adds them once its stations are
 *   drawn: `PLACES_SOURCE`, `placesLayer`)
 */
export function builtInStyle(fontFaces, { places = true } = {}) {
  const kind = (k) => ['==', ['get', 'kind'], k];
  return {
    version: 8,
    'font-faces': Object.fromEntries(Object.entries(fontFaces).map(([name, faces]) => [name, faces.map((face) => ({ ...face, url: absolute(face.url) }))])),
    sources: {
      basemap: { type: 'geojson', data: absolute('/map/v1/basemap.geojson'), attribution: 'Natural Earth' },
      ...(places ? { places: PLACES_SOURCE } : {}),
    },
    layers: [
      { id: 'sea', type: 'background', paint: { 'background-color': '#cddff0' } },
      { id: 'land', type: 'fill', source: 'basemap', filter: kind('land'), paint: { 'fill-color': '#f4f2ec' } },
      { id: 'border', type: 'line', source: 'basemap', filter: kind('border'), paint: { 'line-color': '#9b948a', 'line-width': 0.8, 'line-dasharray': [3, 2] } },
      { id: 'coast', type: 'line', source: 'basemap', filter: kind('coast'), paint: { 'line-color': '#7f9cb8', 'line-width': 0.9 } },
      ...(places ? [placesLayer(fontFaces)] : []),
    ],
  };
}

/** The place names' vector tiles, from the platform. */
export const PLACES_SOURCE = {
  type: 'vector',
  tiles: [`${location.origin}/map/v1/places/{z}/{x}/{y}`], // (not through URL: it would escape the braces)
  minzoom: 2,
  maxzoom: 12,
  attribution: '<a href="https://www.geonames.org/" target="_blank" rel="noopener">GeoNames</a> (CC BY 4.0)',
};

/** The place names' layer, in the font the settings name. */
export function placesLayer(fontFaces) {
  const byKind = (values, otherwise) => ['match', ['get', 'kind'], ...values, otherwise];
  return {
    id: 'places',
    type: 'symbol',
    source: 'places',
    'source-layer': 'places',
    layout: {
      'text-field': ['get', 'name'],
      'text-font': Object.keys(fontFaces),
      'text-size': byKind(['capital', 15, 'city', 13.5, 'town', 12.5], 11.5),
      'text-padding': 6,
      'text-max-width': 8,
      'symbol-sort-key': ['get', 'rank'],
    },
    paint: {
      'text-color': byKind(['capital', '#222', 'city', '#333', 'district', '#6b6358'], '#4a4540'),
      'text-halo-color': 'rgba(255,255,255,0.9)',
      'text-halo-width': 1.4,
    },
  };
}

/**
 * The public map page in Debian's headless Chromium (playwright-core, the flags of
 * test/helpers/portal-browser.ts): each load in a fresh browser context (an empty HTTP cache: a first
 * visit, every file fetched), a desktop screen of 1280 × 900. A load is timed from navigation start
 * to the page's `map:stations-drawn` mark (src/browser/map/map.js: the map idle after the stations
 * were shown, their source loaded and rendered, the markers placed), read from the page's own
 * timeline, so neither the driver's round trips nor its polling count. The element's
 * `data-stations-drawn` must then say that the markers stand for every station. The phases come from
 * the same timeline: the document, MapLibre's module, the feed's download, the feed parsed
 * (`map:feed-loaded`), the list and the map's data set (`map:first-render`).
 *
 * Given `feed`, the page gets that body in place of the platform's feed (an empty collection: what the
 * map costs without stations, the floor its stations' time is read against).
 *
 * With BENCH_TRACE_DIR set, the first measured load is also recorded as a Chromium performance trace
 * (`map-load.json`; open it in Chrome DevTools' Performance panel or https://ui.perfetto.dev).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM } from '../../helpers/portal-browser.js';

/** Milliseconds from navigation start, per phase of one load. */
export interface MapLoad {
  /** The HTML document received. */
  document: number;
  /** MapLibre's module received. */
  maplibre: number;
  /** The feed's request sent and its last byte received. */
  feedRequested: number;
  feedReceived: number;
  /** The feed parsed and held (`map:feed-loaded`). */
  feedLoaded: number;
  /** The list rendered and the map's data set (`map:first-render`). */
  firstRender: number;
  /** The stations drawn (`map:stations-drawn`): what a load is timed by. */
  drawn: number;
  /** The longest task of the main thread (ms), from the Long Tasks API. */
  longestTask: number;
  /** Bytes of the feed as transferred (gzip or brotli) and decoded. */
  feedTransfer: number;
  feedDecoded: number;
  /** Elements in the document once drawn (the list's items among them). */
  elements: number;
}

/** What the page's timeline says, read in the page. */
const TIMELINE = `(() => {
  const at = (name) => performance.getEntriesByName(name)[0];
  const resource = (suffix) => performance.getEntriesByType('resource').find((r) => r.name.endsWith(suffix));
  const nav = performance.getEntriesByType('navigation')[0];
  const feed = resource('/map/v1/stations.geojson');
  const maplibre = resource('/maplibre-gl.mjs') ?? performance.getEntriesByType('resource').find((r) => r.name.includes('maplibre-gl.mjs'));
  return {
    document: nav.responseEnd,
    maplibre: maplibre ? maplibre.responseEnd : NaN,
    feedRequested: feed ? feed.requestStart : NaN,
    feedReceived: feed ? feed.responseEnd : NaN,
    feedLoaded: at('map:feed-loaded')?.startTime ?? NaN,
    firstRender: at('map:first-render')?.startTime ?? NaN,
    drawn: at('map:stations-drawn')?.startTime ?? NaN,
    longestTask: Math.max(0, ...(window.__longTasks ?? [])),
    feedTransfer: feed ? feed.transferSize : NaN,
    feedDecoded: feed ? feed.decodedBodySize : NaN,
    elements: document.getElementsByTagName('*').length,
  };
})()`;

/** Collects the main thread's long tasks from the start of the load. */
const LONG_TASKS = `window.__longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
  .observe({ type: 'longtask', buffered: true });`;

/**
 * Loads `url` `warmups` times unmeasured (the server's first answers, V8's first compilations) and
 * then `loads` times measured; each must draw `stations` stations within `timeoutMs`.
 */
export async function timeMapLoads(
  url: string,
  stations: number,
  { loads, warmups, timeoutMs = 60_000, feed }: { loads: number; warmups: number; timeoutMs?: number; feed?: { body: string; etag: string } },
): Promise<MapLoad[]> {
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  try {
    const measured: MapLoad[] = [];
    for (let n = 0; n < warmups + loads; n++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'Europe/Berlin' });
      try {
        await context.addInitScript(LONG_TASKS);
        const page = await context.newPage();
        // The map's own floor: the page given another feed (under the real one's ETag, so the stream's
        // hello asks for no other).
        if (feed) {
          await page.route('**/map/v1/stations.geojson', (route) =>
            route.fulfill({ status: 200, contentType: 'application/geo+json', headers: { ETag: feed.etag }, body: feed.body }),
          );
        }
        const problems: string[] = [];
        page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(message.text());
        });
        const traceDir = process.env.BENCH_TRACE_DIR;
        const tracing = traceDir && n === warmups && !feed;
        if (tracing) {
          mkdirSync(traceDir, { recursive: true });
          await browser.startTracing(page, { path: join(traceDir, 'map-load.json'), screenshots: true });
        }
        await page.goto(url);
        const drawn = await page.waitForSelector('#map[data-stations-drawn]', { state: 'attached', timeout: timeoutMs });
        const count = Number(await drawn.getAttribute('data-stations-drawn'));
        if (tracing) {
          await browser.stopTracing();
          process.stderr.write(`Chromium trace of a map load: ${join(traceDir, 'map-load.json')}\n`);
        }
        if (count !== stations) throw new Error(`the map's markers stand for ${count} stations, not ${stations}`);
        if (problems.length > 0) throw new Error(`the map page reported: ${problems.slice(0, 3).join('; ')}`);
        const load = (await page.evaluate(TIMELINE)) as MapLoad;
        for (const [phase, ms] of Object.entries(load)) {
          if (!Number.isFinite(ms)) throw new Error(`the page's timeline lacks ${phase}`);
        }
        if (n >= warmups) measured.push(load);
      } finally {
        await context.close();
      }
    }
    return measured;
  } finally {
    await browser.close();
  }
}

/**
 * The station panel's sections, each built from the detail (GET /map/v1/stations/{hrs_id}: the feed's
 * Feature, the week, per fuelling option its value, price and green share, events, certification) as DOM
 * nodes (never HTML strings: every value is the registry's text, shown as text). Times are the
 * station's own, in its zone, named.
 */
import { currentLocale, t } from './i18n.js';
import { OPTIONS, reasonWords, stateClass, stateLetter, stateName } from './status.js';

/** An element with a class and children (strings become text). */
export function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** A titled section of the panel. */
export function section(title, ...content) {
  return el('section', 'panel-section', el('h3', null, title), ...content);
}

/** An instant in the station's zone, the zone named: "27 Nov 2026, 10:40 CET (Europe/Berlin)". */
export function stationTime(iso, zone) {
  // dateStyle and timeStyle do not combine with timeZoneName: the parts are named one by one.
  const options = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' };
  try {
    return `${new Intl.DateTimeFormat(currentLocale(), { ...options, timeZone: zone }).format(new Date(iso))} (${zone})`;
  } catch {
    // an unknown zone: UTC, said so
    return new Intl.DateTimeFormat(currentLocale(), { ...options, timeZone: 'UTC' }).format(new Date(iso));
  }
}

/** The options in the fuel-type list's order. */
const ordered = (options) => [...(options ?? [])].sort((a, b) => OPTIONS.indexOf(a.fuelling_option) - OPTIONS.indexOf(b.fuelling_option));

/** Per fuelling option (`options`: the detail's, or the feed's): the value (letter, colour, words), its reason, the last update. */
export function statusList(options, zone = 'UTC', events = []) {
  const entries = ordered(options);
  return el(
    'ul',
    'status-list',
    ...entries.map((entry) => {
      const item = el(
        'li',
        'status-item',
        el('span', `badge ${stateClass(entry.status)}`, stateLetter(entry.status)),
        el(
          'span',
          'status-words',
          el('strong', null, `${t(`option_${entry.fuelling_option}`)}: ${stateName(entry.status)}`),
          el('span', 'status-reason', reasonWords(entry)),
          el('span', 'status-time muted', entry.datetime ? t('panel_last_update', { time: stationTime(entry.datetime, zone) }) : t('panel_no_update')),
          explained(entry, events),
        ),
      );
      item.dataset.option = entry.fuelling_option;
      item.dataset.status = entry.status;
      item.firstChild.setAttribute('aria-hidden', 'true');
      return item;
    }),
  );
}

/** The week's opening hours in words, one line a day from today. */
export function weekList(detail) {
  if (!detail.opening_hours) return el('p', 'muted', t('panel_hours_unknown'));
  const day = new Intl.DateTimeFormat(currentLocale(), { weekday: 'long', day: 'numeric', month: 'short', timeZone: 'UTC' });
  return el(
    'dl',
    'week',
    ...detail.week.flatMap((d, index) => {
      const name = day.format(new Date(`${d.date}T12:00:00Z`)) + (index === 0 ? ` (${t('panel_today')})` : '');
      const hours =
        d.intervals.length === 0
          ? t('panel_hours_closed')
          : d.intervals.length === 1 && d.intervals[0].from === '00:00' && d.intervals[0].to === '24:00'
            ? t('panel_hours_all_day')
            : d.intervals.map((i) => `${i.from}–${i.to}`).join(', ');
      return [el('dt', null, name), el('dd', null, hours)];
    }),
  );
}

/**
 * Ongoing and upcoming events: kind, time span in the station's zone ("since …, until …" for one under
 * way, "… to …" for one to come), description.
 */
export function eventList(events, zone) {
  if (!events || events.length === 0) return el('p', 'muted', t('panel_no_events'));
  const now = Date.now();
  return el(
    'ul',
    'event-list',
    ...events.map((e) => {
      const from = stationTime(e.starts_at, zone);
      const to = e.ends_at ? stationTime(e.ends_at, zone) : null;
      const ongoing = Date.parse(e.starts_at) <= now;
      const span = to ? t(ongoing ? 'panel_event_ongoing' : 'panel_event_range', { from, to }) : t(ongoing ? 'panel_event_ongoing_open' : 'panel_event_open_ended', { from });
      return el('li', null, el('strong', null, t(`event_${e.kind}`)), ' ', el('span', null, span), e.description ? el('span', 'event-text', e.description) : null);
    }),
  );
}

/** Live prices per fuelling option ("700 bar, cars: 13.85 EUR per kg"). */
export function priceList(detail) {
  const priced = ordered(detail.fuelling_options).filter((o) => o.gross_price !== null);
  if (priced.length === 0) return el('p', 'muted', t('panel_no_prices'));
  return el(
    'ul',
    'plain',
    ...priced.map((o) => {
      // Two decimals, as pumps show prices (the API keeps three).
      const price = new Intl.NumberFormat(currentLocale(), { style: 'currency', currency: o.currency, minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(o.gross_price));
      return el('li', null, t('panel_price', { option: t(`option_${o.fuelling_option}`), price }));
    }),
  );
}

/** The green hydrogen share per fuelling option, as the operator declared it for the product dispensed. */
export function greenList(detail) {
  const declared = ordered(detail.fuelling_options).filter((o) => o.green_hydrogen_share !== null);
  if (declared.length === 0) return el('p', 'muted', t('panel_green_unknown'));
  const number = new Intl.NumberFormat(currentLocale(), { maximumFractionDigits: 1 });
  return el('ul', 'plain', ...declared.map((o) => el('li', null, t('panel_green_value', { option: t(`option_${o.fuelling_option}`), share: number.format(o.green_hydrogen_share) }))));
}

/** Per fuelling option, how many of its nozzles are certified (nozzle and dispenser both); the station's total after. */
export function certification(detail) {
  if (!detail.certification) return el('p', 'muted', t('panel_layout_unconfirmed'));
  const options = ordered(detail.fuelling_options).filter((o) => o.certification && o.certification.nozzles > 0);
  return el(
    'div',
    null,
    options.length > 0
      ? el(
          'ul',
          'plain certification-list',
          ...options.map((o) => {
            const item = el('li', null, t('panel_certified_option', { option: t(`option_${o.fuelling_option}`), certified: o.certification.certified, total: o.certification.nozzles }));
            item.dataset.option = o.fuelling_option;
            return item;
          }),
        )
      : null,
    options.length > 0
      ? el('div', 'muted', t('panel_certified_total', { certified: detail.certification.certified, total: detail.certification.nozzles }))
      : el('p', null, t('panel_certified', { certified: detail.certification.certified, total: detail.certification.nozzles })),
  );
}

/**
 * An option that cannot be used while an announced event goes on: a link to the event that explains
 * it ("Maintenance announced: see Events"), null otherwise.
 */
function explained(entry, events) {
  if (entry.status === 'AVAILABLE' || entry.status === 'LIMITEDLY_AVAILABLE') return null;
  const event = ongoingEvents(events)[0];
  if (!event) return null;
  const link = el('a', 'status-event', t('panel_event_explains', { kind: t(`event_${event.kind}`) }));
  link.href = '#panel-events';
  // The address is the map's own state (app.js): the link scrolls the panel, it does not navigate.
  link.addEventListener('click', (event) => {
    event.preventDefault();
    document.getElementById('panel-events')?.scrollIntoView({ block: 'start' });
  });
  return link;
}

/** The events going on now (started, not ended), which may explain a status. */
export function ongoingEvents(events, now = Date.now()) {
  return (events ?? []).filter((e) => Date.parse(e.starts_at) <= now && (!e.ends_at || Date.parse(e.ends_at) > now));
}

/** A `geo:` URI for the phone's maps app and a route on OpenStreetMap. */
export function directions(properties, coordinates) {
  const [lon, lat] = coordinates;
  const geo = el('a', 'button button-secondary button-small', t('panel_directions_app'));
  geo.href = `geo:${lat},${lon}?q=${lat},${lon}(${encodeURIComponent(properties.name)})`;
  const osm = el('a', 'button button-secondary button-small', t('panel_directions_osm'));
  osm.href = `https://www.openstreetmap.org/directions?route=%3B${lat}%2C${lon}#map=14/${lat}/${lon}`;
  osm.rel = 'noopener noreferrer';
  osm.target = '_blank';
  return el('p', 'directions', geo, osm);
}

/** The likelihood words of the forecast, best first (src/domain/export-v2/forecast.ts). */
const LIKELIHOODS = ['very_likely', 'likely', 'uncertain', 'unlikely', 'very_unlikely', 'closed'];

/** An hour's start on the station's clock ("14:00"); UTC when its zone is unknown. */
function hourOf(iso, zone) {
  const options = { hour: '2-digit', minute: '2-digit' };
  try {
    return new Intl.DateTimeFormat(currentLocale(), { ...options, timeZone: zone }).format(new Date(iso));
  } catch {
    return new Intl.DateTimeFormat(currentLocale(), { ...options, timeZone: 'UTC' }).format(new Date(iso));
  }
}

/**
 * The forecast (GET /map/v1/stations/{hrs_id}/forecast) as a driver reads it at a glance: per fuelling
 * option a table of the next 12 hours, each row the hour on the station's clock, a bar as long as the
 * probability (drawn by classes: the page's policy allows no inline style) and the likelihood in words.
 * The bar is decoration (`aria-hidden`): the words say it. `state`: `{ kind: 'loading' | 'not_published'
 * | 'error' }` or `{ kind: 'ready', body }`.
 */
export function forecastView(state, zone = 'UTC') {
  const node = el('div', 'forecast');
  node.dataset.state = state?.kind ?? 'loading';
  if (!state || state.kind === 'loading') {
    node.append(el('p', 'muted', t('panel_loading')));
    return node;
  }
  if (state.kind === 'not_published') {
    node.append(el('p', 'forecast-none', t('forecast_not_published')));
    return node;
  }
  if (state.kind === 'error') {
    node.append(el('p', 'forecast-none', t('forecast_error')));
    return node;
  }
  const body = state.body;
  node.dataset.generated = body.generated_at;
  const options = ordered(body.fuelling_options);
  if (options.length === 0) {
    node.append(el('p', 'muted', t('forecast_no_options')));
    return node;
  }
  node.append(el('p', 'muted forecast-zone', t('forecast_zone', { zone })));
  for (const option of options) {
    const name = t(`option_${option.fuelling_option}`);
    const part = el('div', 'forecast-option', el('h4', null, name));
    part.dataset.option = option.fuelling_option;
    part.dataset.status = option.status;
    if (option.forecast === null) {
      part.append(el('p', 'forecast-none', t('forecast_not_enough')));
    } else {
      const rows = option.forecast.map((hour, index) => {
        const word = LIKELIHOODS.includes(hour.likelihood) ? hour.likelihood : 'uncertain';
        const fill = el('span', `forecast-fill fc-${word} fc-p${Math.round(Math.min(1, Math.max(0, hour.probability)) * 20)}`);
        const bar = el('span', 'forecast-bar', fill);
        bar.setAttribute('aria-hidden', 'true');
        const when = el('th', null, hourOf(hour.from, zone), index === 0 ? el('span', 'forecast-now', ` ${t('forecast_now')}`) : null);
        when.scope = 'row';
        const row = el('tr', null, when, el('td', null, el('span', 'forecast-cell', bar, el('span', 'forecast-word', t(`likelihood_${word}`)))));
        row.dataset.likelihood = hour.likelihood;
        row.dataset.from = hour.from;
        return row;
      });
      const hourHead = el('th', null, t('forecast_hour'));
      hourHead.scope = 'col';
      const wordHead = el('th', null, t('forecast_available'));
      wordHead.scope = 'col';
      part.append(
        el(
          'table',
          'forecast-table',
          el('caption', 'visually-hidden', t('forecast_caption', { option: name })),
          el('thead', null, el('tr', null, hourHead, wordHead)),
          el('tbody', null, ...rows),
        ),
      );
    }
    node.append(part);
  }
  return node;
}

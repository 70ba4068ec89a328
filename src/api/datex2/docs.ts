import type { RouteDoc } from '../../http/contract.js';
import { headerRef, parameterRef, responseRef } from '../../http/openapi.js';
import { COMMON, problem, problemBody } from '../export/docs.js';

/**
 * The DATEX II v3.7 publications for National Access Points (`/datex2/v3/...`), documented in the
 * export v2 reference: same tokens, same budget, XML bodies.
 */

const XML = 'application/xml';

/** The reference page's section on the DATEX II publications: what they hold and where DATEX and the registry do not meet one to one. */
export const DATEX2_DESCRIPTION = [
  '## DATEX II publications (AFIR)',
  'For National Access Points under AFIR (Regulation (EU) 2023/1804, Art. 20; Implementing Regulation (EU) ' +
    '2025/655), the network is also published in DATEX II version 3.7, in the AFIR namespaces ' +
    '(`afirEnergyInfrastructure`, `afirFacilities`). Both documents are a `d2:payload` valid against the official ' +
    '3.7 schema set (root `DATEXII_3_D2Payload.xsd`), read with the same personal token and counted against the ' +
    'same per-user limits as the rest of export v2 (a NAP polling the status every minute makes 1,440 requests a ' +
    'day), with the same licence `Link`, and gzip-encoded when accepted.',
  '- `GET /datex2/v3/table` (static data, `aegi:EnergyInfrastructureTablePublication`): one ' +
    '`energyInfrastructureSite` per station, with its name, operator (`afac:AnOrganisation`, with the station\'s ' +
    'contact phone and e-mail), owner, website, opening hours, location (`loc:PointLocation`: the station\'s time ' +
    'zone and address in the location extension before `coordinatesForDisplay`, its NUTS region after it, the ' +
    'entrance as `entrance`), and one `energyInfrastructureStation` with its hydrogen refuelling modes (`700ld` → ' +
    '`gaseousHydrogen700barCar`, `350ld` → `gaseousHydrogen350barCar`, `700hd` → `gaseousHydrogen700barTruck`, ' +
    '`350hd` → `gaseousHydrogen350barTruck`), its `cumulativeCapacityperDay`, one `AlternativeFuelsRefillPoint` ' +
    'per nozzle of the confirmed layout (connector `gaseousHydrogen`, pressure in bar, delivery unit kg, the ' +
    'renewable share of its product) and one energy product per priced product, whose `energyRate` (`adHoc`, ' +
    '`pricePerKg`, the gross price with `taxIncluded`) the refill points dispensing it refer to. Ids are stable: ' +
    'the site is the `hrs_id`, its station `{hrs_id}-S`, a refill point `{hrs_id}-N-{nozzle}`, an energy rate ' +
    '`{hrs_id}-R-{product}`; every `version` is a digest of the object\'s content, so it changes when the content ' +
    'does and only then. Conditional: `Last-Modified` / `If-Modified-Since` as on `GET /v2/hrs`; it also moves ' +
    'with each pricing reading of a priced station (the rates carry its measurement time).',
  '- `GET /datex2/v3/status` (dynamic data, `aegi:EnergyInfrastructureStatusPublication`): served from memory, ' +
    'so it shows a change as soon as `GET /v2/hrs/status` does. Per refill point a `status` from the precedence ' +
    'of the v1.1 five-state summary, refined by the nozzle\'s own readings: outside the opening hours ' +
    '`unavailable` with `openingStatus` `closed`; no availability signal for 30 minutes `unknown`; maintenance ' +
    '`outOfOrder`; limited `available` with `operationStatus` `limitedOperation`; the nozzle not reported ' +
    '`unknown`; reported unavailable `outOfOrder`; available and its live usage `in-use` `occupied`, `reserved` ' +
    '`reserved`, otherwise `available` (with `statusDescription` saying which). A station whose latest reading ' +
    'is v1/v1.1 gives each nozzle its fuelling option\'s value. A live storage reading sets the station\'s ' +
    '`limitedHydrogenAmount`; the latest pricing appears as `energyRateUpdate`.',
  '### Where DATEX and the registry do not meet one to one',
  '- **Prices**: the registry takes three decimals per kg, DATEX\'s `AmountOfMoney` two: prices are rounded half ' +
    'up to the cent (`12.345` → `12.35`). The net price is not published (DATEX has one price per rate here).',
  '- **Opening hours**: OpenStreetMap hours are published exactly where DATEX can say them: weekdays, months, times ' +
    'of day (a period past midnight ends the next day), public holidays closed or with hours of their own, `24/7` ' +
    'as `OpenAllHours`. What depends on more than the month and the weekday (single dates, week numbers, the n-th ' +
    'weekday of a month, sunrise and sunset) is published as each weekday\'s usual hours in each month, and the ' +
    'site\'s `additionalInformation` says how (`Opening hours: …`); the original text is always in the `label`.',
  '- **Time zone**: DATEX\'s `timeZone` is an offset, not a zone name: the zone\'s standard offset (`+01:00` for ' +
    'Europe/Berlin) is published, and opening times are the station\'s local wall-clock times.',
  '- **Left out**: a station without `cumulative_daily_hydrogen_capacity` or coordinates (both required by the ' +
    'AFIR profile) is not published, never as an invalid document: the service logs a warning once per change of ' +
    'the station and counts them in `/metrics` (`hrs_datex2_stations_left_out`).',
].join('\n\n');

const XML_EXAMPLE_NOTE = 'A `d2:payload` document (DATEX II 3.7, XML), valid against `DATEXII_3_D2Payload.xsd`.';

/** `GET /datex2/v3/table`: the static publication; conditional. */
export function tableDoc(): RouteDoc {
  return {
    tags: ['DATEX II'],
    operationId: 'getDatex2Table',
    summary: 'DATEX II energy infrastructure table (AFIR static data)',
    description:
      'Every station as a DATEX II 3.7 `aegi:EnergyInfrastructureTablePublication`: sites, stations, one refill point per ' +
      'nozzle, energy rates. Conditional (`If-Modified-Since`); gzip-encoded when accepted. See "DATEX II publications" above.',
    parameters: [parameterRef('If-Modified-Since')],
    responses: {
      '200': {
        description: XML_EXAMPLE_NOTE,
        headers: { 'Last-Modified': headerRef('Last-Modified') },
        content: { [XML]: { schema: { type: 'string', contentMediaType: XML } } },
      },
      '304': responseRef('NotModified'),
      '404': problem('No station can be published yet (each lacks its daily capacity or coordinates, which the AFIR profile requires): a table must hold at least one site, so none is sent.', {
        no_publishable_station: {
          value: problemBody(
            404,
            'Not Found',
            'no_publishable_station',
            'No station can be published in DATEX II yet: the AFIR profile requires a station\'s cumulative_daily_hydrogen_capacity and coordinates (2 station(s) lack the capacity, 2 the coordinates).',
          ),
        },
      }),
      ...COMMON,
    },
  };
}

/** `GET /datex2/v3/status`: the dynamic publication, from memory. */
export function statusDoc(): RouteDoc {
  return {
    tags: ['DATEX II'],
    operationId: 'getDatex2Status',
    summary: 'DATEX II energy infrastructure status (AFIR dynamic data)',
    description:
      'The status of every refill point of the table as a DATEX II 3.7 `aegi:EnergyInfrastructureStatusPublication`, referring ' +
      'to the table\'s objects by id and version, with low storage and price updates per station. Served from memory; not ' +
      'conditional; gzip-encoded when accepted. See "DATEX II publications" above.',
    responses: {
      '200': { description: XML_EXAMPLE_NOTE, content: { [XML]: { schema: { type: 'string', contentMediaType: XML } } } },
      ...COMMON,
    },
  };
}

import { appendOperatingHours } from './operating-hours.js';
import { TABLE_ID, contentVersion, tableVersion, type Coordinates, type EnergyRateModel, type SiteModel, type RefillPointModel } from '../../../domain/datex2/table.js';
import { detached, el, multilingual, payloadDocument, typed, writeElement, type Node, type PayloadDocument } from './writer.js';

/**
 * `GET /datex2/v3/table`: the `d2:payload` of type `aegi:EnergyInfrastructureTablePublication` (DATEX II
 * 3.7, AFIR namespaces) for the sites of table.ts. Every element is written in the order its schema
 * type's sequence gives (base types first), so the document validates against `DATEXII_3_D2Payload.xsd`.
 */

/** Who publishes: `com:publicationCreator` (a country and an identifier within it). */
export interface Publisher {
  country: string;
  nationalIdentifier: string;
}

/** The header every publication starts with: `publicationTime` and `publicationCreator`. */
export function appendPublicationHeader(root: Node, publisher: Publisher, at: Date): void {
  root.att('lang', 'en').att('modelBaseVersion', '3');
  el(root, 'com', 'publicationTime', isoSeconds(at));
  const creator = el(root, 'com', 'publicationCreator');
  el(creator, 'com', 'country', publisher.country);
  el(creator, 'com', 'nationalIdentifier', publisher.nationalIdentifier);
}

/** An instant as `xs:dateTime` in UTC. */
export const isoSeconds = (at: Date) => at.toISOString();

/** The whole table publication as a string. */
export function tablePublication(sites: readonly SiteModel[], publisher: Publisher, at: Date): string {
  const { document, table } = tableEnvelope(sites, publisher, at);
  return document.writeAround(table, sites.map(keptSite));
}

/** The document without its sites, and the table element they go into. */
export function tableEnvelope(sites: readonly SiteModel[], publisher: Publisher, at: Date): { document: PayloadDocument; table: Node } {
  const document = payloadDocument('aegi:EnergyInfrastructureTablePublication');
  appendPublicationHeader(document.root, publisher, at);
  const table = el(document.root, 'aegi', 'energyInfrastructureTable').att('id', TABLE_ID).att('version', tableVersion(sites));
  el(table, 'aegi', 'tableName', 'Hydrogen refuelling stations');
  return { document, table };
}

/** Each site's element as written, once per site model (the publications keep a model while its station and pricing hold). */
const written = new WeakMap<SiteModel, string>();

function keptSite(site: SiteModel): string {
  let text = written.get(site);
  if (text === undefined) {
    text = writeElement(siteElement(site));
    written.set(site, text);
  }
  return text;
}

/** One site's element (`aegi:energyInfrastructureSite`). */
export function siteElement(site: SiteModel): Node {
  const node = detached('aegi', 'energyInfrastructureSite');
  appendSite(node, site);
  return node;
}

function externalIdentifier(parent: Node, prefix: 'afac', identifier: string): void {
  el(el(parent, prefix, 'externalIdentifier'), 'afac', 'identifier', identifier);
}

/**
 * A `loc:PointLocation` as `prefix:name` (the facility's `afac:locationReference`, the site's
 * `aegi:entrance`); with `site`, its time zone, address and NUTS region too.
 */
function appendPoint(parent: Node, [prefix, name]: ['afac' | 'aegi', string], point: Coordinates, site?: SiteModel): void {
  const location = typed(el(parent, prefix, name), 'loc:PointLocation');
  if (site && (site.timeZoneOffset !== null || site.address !== null)) {
    // LocationReference's extension comes first, before Location's coordinatesForDisplay.
    const facility = el(el(location, 'loc', '_locationReferenceExtension'), 'loc', 'facilityLocation');
    if (site.timeZoneOffset !== null) el(facility, 'locx', 'timeZone', site.timeZoneOffset);
    if (site.address !== null) appendAddress(facility, site.address);
  }
  coordinates(el(location, 'loc', 'coordinatesForDisplay'), point);
  if (site?.nuts) {
    const nuts = el(el(el(location, 'loc', '_locationExtension'), 'loc', 'afirFacilityLocation'), 'afac', 'nutsArea');
    el(nuts, 'afac', 'nutsCodeType', site.nuts.type);
    el(nuts, 'afac', 'nutsCode', site.nuts.code);
  }
  coordinates(el(el(location, 'loc', 'pointByCoordinates'), 'loc', 'pointCoordinates'), point);
}

function coordinates(parent: Node, point: Coordinates): void {
  el(parent, 'loc', 'latitude', point.latitude);
  el(parent, 'loc', 'longitude', point.longitude);
}

function appendAddress(parent: Node, address: NonNullable<SiteModel['address']>): void {
  const node = el(parent, 'locx', 'address');
  if (address.postcode !== undefined) el(node, 'locx', 'postcode', address.postcode);
  if (address.city !== undefined) multilingual(node, 'locx', 'city', address.city);
  if (address.countryCode !== undefined) el(node, 'locx', 'countryCode', address.countryCode);
  address.lines.forEach((line, order) => {
    const lineNode = el(node, 'locx', 'addressLine').att('order', String(order));
    el(lineNode, 'locx', 'type', line.type);
    multilingual(lineNode, 'locx', 'text', line.text);
  });
}

function appendOperator(parent: Node, site: SiteModel): void {
  const operator = typed(el(parent, 'afac', 'operator'), 'afac:AnOrganisation');
  multilingual(operator, 'afac', 'name', site.operator.name);
  if (site.phone !== null || site.email !== null) {
    const contact = el(el(operator, 'afac', 'organisationUnit'), 'afac', 'contactInformation');
    if (site.phone !== null) el(contact, 'afac', 'telephoneNumber', site.phone);
    if (site.email !== null) el(contact, 'afac', 'eMail', site.email);
  }
  externalIdentifier(operator, 'afac', site.operator.id);
}

function appendSite(node: Node, site: SiteModel): void {
  node.att('id', site.id).att('version', site.version);
  multilingual(node, 'afac', 'name', site.name);
  el(node, 'afac', 'lastUpdated', site.lastUpdated);
  if (site.directions !== null) multilingual(node, 'afac', 'additionalInformation', site.directions);
  // Hours DATEX cannot say exactly: the document says how they were approximated (the label has the original).
  const hours = site.openingHours?.hours;
  if (hours?.kind === 'specification') for (const note of hours.approximations) multilingual(node, 'afac', 'additionalInformation', `Opening hours: ${note}`, 'en');
  externalIdentifier(node, 'afac', site.hrsId);
  if (site.website !== null) el(el(node, 'afac', 'informationWebsite'), 'com', 'urlLinkAddress', site.website);
  if (site.openingHours !== null) {
    const spec = { id: `${site.id}-H`, since: site.lastUpdated, osm: site.openingHours.osm };
    appendOperatingHours(node, site.openingHours.hours, { ...spec, version: contentVersion([spec, site.openingHours.hours]) });
  }
  appendPoint(node, ['afac', 'locationReference'], site.location, site);
  if (site.owner !== null) multilingual(typed(el(node, 'afac', 'owner'), 'afac:AnOrganisation'), 'afac', 'name', site.owner);
  appendOperator(node, site);
  if (site.entrance !== null) appendPoint(node, ['aegi', 'entrance'], site.entrance);
  appendStation(node, site);
}

function appendStation(siteNode: Node, site: SiteModel): void {
  const station = site.station;
  const node = el(siteNode, 'aegi', 'energyInfrastructureStation').att('id', station.id).att('version', station.version);
  multilingual(node, 'afac', 'name', station.name);
  el(node, 'aegi', 'numberOfRefillPoints', station.refillPoints.length);
  const hydrogen = el(node, 'aegi', 'hydrogen');
  for (const mode of station.refuellingModes) el(hydrogen, 'aegi', 'refuellingMode', mode);
  el(hydrogen, 'aegi', 'cumulativeCapacityperDay', station.capacityPerDay);
  for (const point of station.refillPoints) appendRefillPoint(node, point);
  for (const rate of station.rates) appendEnergyProduct(node, rate);
}

function appendRefillPoint(stationNode: Node, point: RefillPointModel): void {
  const node = typed(el(stationNode, 'aegi', 'refillPoint'), 'aegi:AlternativeFuelsRefillPoint').att('id', point.id).att('version', point.version);
  multilingual(node, 'afac', 'name', `Nozzle ${point.nozzle} (dispenser ${point.dispenser})`, 'en');
  externalIdentifier(node, 'afac', point.nozzle);
  el(node, 'aegi', 'deliveryUnit', 'kg');
  for (const rate of point.rates) {
    const product = el(node, 'aegi', 'energyProduct');
    el(product, 'aegi', 'energyRateByReference').att('id', rate).att('targetClass', 'aegi:EnergyRate');
  }
  el(node, 'aegi', 'connector', 'gaseousHydrogen');
  if (point.renewableShare !== null) el(node, 'aegi', 'renewableSourcesRatio', point.renewableShare);
  if (point.pressure !== null) el(node, 'aegi', 'pressure', point.pressure);
}

function appendEnergyProduct(stationNode: Node, rate: EnergyRateModel): void {
  const product = el(stationNode, 'aegi', 'energyProduct');
  multilingual(product, 'aegi', 'energyProductName', `Hydrogen ${rate.pressure} bar (${rate.product})`, 'en');
  if (rate.greenShare !== null) el(product, 'aegi', 'isGreenEnergy', rate.greenShare >= 100);
  const energyRate = el(product, 'aegi', 'energyRate').att('id', rate.id);
  el(energyRate, 'aegi', 'ratePolicy', 'adHoc');
  el(energyRate, 'aegi', 'lastUpdated', rate.lastUpdated);
  el(energyRate, 'aegi', 'applicableCurrency', rate.currency);
  appendEnergyPrice(energyRate, rate);
}

/** The gross price per kg, tax included. */
export function appendEnergyPrice(parent: Node, rate: EnergyRateModel): void {
  const price = el(parent, 'aegi', 'energyPrice');
  el(price, 'aegi', 'priceGroupIndex', 0);
  el(price, 'aegi', 'priceType', 'pricePerKg');
  el(price, 'aegi', 'value', rate.grossPrice);
  el(price, 'aegi', 'taxIncluded', true);
}

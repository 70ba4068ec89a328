import type { SiteStatusModel } from '../../../domain/datex2/status.js';
import { TABLE_ID } from '../../../domain/datex2/table.js';
import { appendEnergyPrice, appendPublicationHeader, type Publisher } from './table.js';
import { detached, el, multilingual, payloadDocument, type Node, type PayloadDocument } from './writer.js';

/**
 * `GET /datex2/v3/status`: the `d2:payload` of type `aegi:EnergyInfrastructureStatusPublication`
 * referring to the table's objects by id and version (status.ts computes what it says).
 */

function reference(parent: Node, id: string, version: string): void {
  el(parent, 'afac', 'reference').att('id', id).att('version', version).att('targetClass', 'afac:FacilityObject');
}

const REASON_TEXT: Record<string, string> = {
  outside_opening_hours: 'Outside the opening hours.',
  no_signal: 'No availability signal for 30 minutes.',
  maintenance: 'The station reports maintenance.',
  limited: 'The station reports limited availability.',
  not_reported: 'The last availability signal does not report this nozzle.',
  reported_unavailable: 'Reported unavailable.',
  reported_available: 'Reported available.',
  in_use: 'Reported available and in use.',
  reserved: 'Reported available and reserved.',
};

/** The status publication around the sites' elements as written (`writeElement(siteStatusElement(…))`, kept by the caller). */
export function statusPublication(sites: readonly string[], tableVersion: string | null, publisher: Publisher, at: Date): string {
  const { document, root } = statusEnvelope(tableVersion, publisher, at);
  return document.writeAround(root, sites);
}

/** The document without its sites (they are the root's last children). */
export function statusEnvelope(tableVersion: string | null, publisher: Publisher, at: Date): { document: PayloadDocument; root: Node } {
  const document = payloadDocument('aegi:EnergyInfrastructureStatusPublication');
  appendPublicationHeader(document.root, publisher, at);
  // No site, no table to refer to (the table publication needs at least one site).
  if (tableVersion !== null) {
    el(document.root, 'aegi', 'tableReference').att('id', TABLE_ID).att('version', tableVersion).att('targetClass', 'aegi:EnergyInfrastructureTable');
  }
  return { document, root: document.root };
}

/** One site's status element (`aegi:energyInfrastructureSiteStatus`). */
export function siteStatusElement(site: SiteStatusModel): Node {
  const node = detached('aegi', 'energyInfrastructureSiteStatus');
  reference(node, site.site.id, site.site.version);
  if (site.lastUpdated !== null) el(node, 'afac', 'lastUpdated', site.lastUpdated);
  el(node, 'afac', 'openingStatus', site.openingStatus);
  const station = el(node, 'aegi', 'energyInfrastructureStationStatus');
  reference(station, site.station.id, site.station.version);
  if (site.lastUpdated !== null) el(station, 'afac', 'lastUpdated', site.lastUpdated);
  el(station, 'afac', 'openingStatus', site.openingStatus);
  if (site.operationStatus !== null) el(station, 'afac', 'operationStatus', site.operationStatus);
  if (site.isAvailable !== null) el(station, 'aegi', 'isAvailable', site.isAvailable);
  if (site.limitedHydrogenAmount !== null) el(station, 'aegi', 'limitedHydrogenAmount', site.limitedHydrogenAmount);
  for (const point of site.refillPoints) {
    const p = el(station, 'aegi', 'refillPointStatus');
    reference(p, point.id, point.version);
    if (point.lastUpdated !== null) el(p, 'afac', 'lastUpdated', point.lastUpdated);
    el(p, 'afac', 'openingStatus', point.openingStatus);
    if (point.operationStatus !== null) el(p, 'afac', 'operationStatus', point.operationStatus);
    multilingual(p, 'afac', 'statusDescription', REASON_TEXT[point.reason] ?? point.reason, 'en');
    el(p, 'aegi', 'status', point.status);
  }
  for (const rate of site.rates) {
    const update = el(station, 'aegi', 'energyRateUpdate');
    el(update, 'aegi', 'lastUpdated', rate.lastUpdated);
    el(update, 'aegi', 'energyRateReference').att('id', rate.id).att('targetClass', 'aegi:EnergyRate');
    appendEnergyPrice(update, rate);
  }
  return node;
}

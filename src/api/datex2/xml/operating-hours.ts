import type { DatexHours, DatexPeriod } from '../../../domain/datex2/operating-hours.js';
import { el, typed, type Node } from './writer.js';

/** Opening hours as DATEX II writes them (src/domain/datex2/operating-hours.ts reads them from OSM). */

/** Appends `afac:operatingHours` (xsi:type afac:OpenAllHours or afac:OperatingHoursSpecification) to `parent`. */
export function appendOperatingHours(parent: Node, hours: DatexHours, spec: { id: string; version: string; since: string; osm: string }): void {
  const node = el(parent, 'afac', 'operatingHours');
  if (hours.kind === 'openAllHours') {
    typed(node, 'afac:OpenAllHours');
    return;
  }
  typed(node, 'afac:OperatingHoursSpecification').att('id', spec.id).att('version', spec.version);
  // com:String: at most 1024 characters (code points, as XML Schema counts them).
  const label = Array.from(spec.osm).slice(0, 1024).join('');
  if (label !== '') el(node, 'afac', 'label', label);
  el(node, 'afac', 'operatingAllYear', [...hours.valid, ...hours.exceptions].every((p) => p.months.length === 0));
  const overall = el(node, 'afac', 'overallPeriod');
  el(overall, 'com', 'overallStartTime', spec.since);
  for (const p of hours.valid) appendPeriod(el(overall, 'com', 'validPeriod'), p);
  for (const p of hours.exceptions) appendPeriod(el(overall, 'com', 'exceptionPeriod'), p);
}

function appendPeriod(node: Node, p: DatexPeriod): void {
  for (const t of p.times) {
    const time = el(node, 'com', 'recurringTimePeriodOfDay');
    el(time, 'com', 'startTimeOfPeriod', t.start);
    el(time, 'com', 'endTimeOfPeriod', t.end);
  }
  if (p.days.length > 0 || p.months.length > 0) {
    const dwm = el(node, 'com', 'recurringDayWeekMonthPeriod');
    for (const d of p.days) el(dwm, 'com', 'applicableDay', d);
    for (const m of p.months) el(dwm, 'com', 'applicableMonth', m);
  }
  if (p.publicHoliday) {
    const special = el(node, 'com', 'recurringSpecialDay');
    el(special, 'com', 'intersectWithApplicableDays', false);
    el(special, 'com', 'specialDayType', 'publicHoliday');
  }
}

import { isOpen, nextChange, type HolidayCountry } from '../../domain/opening-hours.js';

/**
 * A station's opening hours as the map's panel shows them: seven days from today, in the station's
 * time zone (UTC when it has none), each with the intervals it is open, by its wall clock (`from` and
 * `to` as `HH:MM`; `24:00` ends an interval that runs to midnight). `[]`: closed all day;
 * `[{from: "00:00", to: "24:00"}]`: open all day (also a station without opening hours, which the
 * five-state summary never shows closed). Walked with the same `isOpen` and `nextChange` the summary
 * and the opening clock use, so the panel never disagrees with the marker.
 */

export interface DayHours {
  date: string;
  intervals: { from: string; to: string }[];
}

const DAY_MS = 86_400_000;

export function weekHours(hours: string | null | undefined, timeZone: string | null | undefined, now: Date, country?: HolidayCountry): DayHours[] {
  const zone = timeZone ?? 'UTC';
  const dateOf = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const clockOf = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const today = dateOf.format(now);
  const days: DayHours[] = [];
  for (let i = 0; i < 7; i++) {
    const date = new Date(Date.parse(`${today}T00:00:00Z`) + i * DAY_MS).toISOString().slice(0, 10);
    const start = midnight(date, zone);
    const end = midnight(new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10), zone);
    const intervals: DayHours['intervals'] = [];
    let open = isOpen(hours, timeZone, new Date(start), country);
    let from = open ? start : undefined;
    let cursor = start;
    while (cursor < end) {
      const change = nextChange(hours, timeZone, new Date(cursor), country);
      const at = change === null ? end : Math.min(change.getTime(), end);
      if (open && from !== undefined && at > from) {
        intervals.push({ from: clockOf.format(new Date(from)), to: at >= end ? '24:00' : clockOf.format(new Date(at)) });
      }
      if (at >= end) break;
      open = !open;
      from = open ? at : undefined;
      cursor = at;
    }
    days.push({ date, intervals });
  }
  return days;
}

/** The instant a local date begins in a zone (the first instant whose wall-clock date is `date`). */
function midnight(date: string, zone: string): number {
  const guess = Date.parse(`${date}T00:00:00Z`);
  let instant = guess - offsetMs(guess, zone);
  // Across a daylight-saving change the offset at the first guess may not be the offset at midnight.
  instant = guess - offsetMs(instant, zone);
  return instant;
}

/** The zone's offset from UTC at an instant, in ms. */
function offsetMs(at: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(at / 1000) * 1000;
}

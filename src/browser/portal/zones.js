// Clocks of time zones for the portal's pages: a zone's wall clock at an instant and its offset from
// UTC, for the times a station's tabs show on the station's clock (station-events.js, timeline.js).
// `timeZone` undefined: the viewer's.

function pad(n) {
  return String(n).padStart(2, '0');
}

/** The wall clock of `zone` at the instant `ms`: { year, month, day, hour, minute, second }. */
export function wallClock(timeZone, ms) {
  var parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  }).formatToParts(new Date(ms));
  var clock = {};
  parts.forEach(function (p) {
    if (p.type !== 'literal') clock[p.type] = Number(p.value);
  });
  return clock;
}

/** Minutes `zone` is ahead of UTC at the instant `ms`. */
export function offsetAt(timeZone, ms) {
  var whole = Math.floor(ms / 1000) * 1000;
  var c = wallClock(timeZone, whole);
  return Math.round((Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second) - whole) / 60000);
}

/** `UTC+01:00` for 60 minutes ahead. */
export function offsetText(minutes) {
  var sign = minutes < 0 ? '−' : '+';
  var m = Math.abs(minutes);
  return 'UTC' + sign + pad(Math.floor(m / 60)) + ':' + pad(m % 60);
}

/**
 * Evaluates opening hours in a process of its own, so tests can run it under another TZ: reads cases
 * (JSON, argv[2]) and prints, as JSON, the process's own UTC offset on 2 March 2026 and each case's
 * `isOpen` and `nextChange`.
 */
import { isOpen, nextChange } from '../../src/domain/opening-hours.js';

interface Case {
  hours: string | null;
  timeZone: string | null;
  at: string;
  country?: string;
}

const cases = JSON.parse(process.argv[2] ?? '[]') as Case[];
const results = cases.map((c) => ({
  open: isOpen(c.hours, c.timeZone, new Date(c.at), c.country),
  next: nextChange(c.hours, c.timeZone, new Date(c.at), c.country)?.toISOString() ?? null,
}));
process.stdout.write(JSON.stringify({ offset: new Date(2026, 2, 2).getTimezoneOffset(), results }));

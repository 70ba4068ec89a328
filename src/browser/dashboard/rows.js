// The stations the dashboard shows, by hrs_id: { row, cells: { category → td }, name, sandbox }. The
// table (stations.js) fills it from the feed; the order (filters.js) and the tail (tail.js) read it.
export const rows = new Map();

/** Whether the station is one of the sandbox's (its rows and tail lines are kept apart). */
export function isSandbox(id) {
  const entry = rows.get(id);
  return entry !== undefined && entry.sandbox;
}

/**
 * A deadline timer that does not blame the other side for our own stall. When the event loop was
 * blocked past a deadline (a large registry loading, a long synchronous computing), the command may
 * not even have been written to its socket yet, and an answer that came would still wait in it: the
 * deadline would pass on the other side's account for time the process itself took. So a timer that
 * fires more than LATE_MS after its time is set again for as long as it was late (the time the loop
 * was not free), up to MAX_GRACE times the deadline in all; `expire` runs when it fires on time.
 */

/** How late a timer may fire before the loop is taken to have been blocked. */
export const LATE_MS = 50;
/** The extensions for a blocked loop add up to at most this many times the deadline. */
export const MAX_GRACE = 10;

export interface DeadlineTimer {
  clear(): void;
}

/** Runs `expire` after `ms` of time the event loop was free (see above), unless cleared first. */
export function deadlineTimer(ms: number, expire: () => void): DeadlineTimer {
  let due = performance.now() + ms;
  let granted = 0;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    const late = performance.now() - due;
    if (late > LATE_MS && granted + late <= MAX_GRACE * Math.max(ms, LATE_MS)) {
      granted += late;
      due = performance.now() + late;
      timer = setTimeout(check, late);
      return;
    }
    timer = undefined;
    expire();
  };
  timer = setTimeout(check, ms);
  return {
    clear() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

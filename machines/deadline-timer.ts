import { DeadlineHeap, type Indexed } from './deadline-heap.js';

/** Node's timers hold at most 2^31-1 ms; longer waits are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Deadlines of many items on one Node timer: the items sit in a heap by due time (each at one place a
 * new due time moves), and the single timer is set for the earliest. Hundreds of thousands of actors
 * cost no timer each; a timer that fires early just sets itself again.
 */
export class DeadlineTimer<T extends Indexed> {
  private readonly heap: DeadlineHeap<T>;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Number.POSITIVE_INFINITY;
  private closed = false;

  /**
   * @param dueOf the due time (epoch ms) of an item while it is armed
   * @param now the clock (epoch ms)
   * @param fire called for each item whose time has come, earliest first, after it left the heap
   */
  constructor(
    private readonly dueOf: (item: T) => number,
    private readonly now: () => number,
    private readonly fire: (item: T) => void,
  ) {
    this.heap = new DeadlineHeap(dueOf);
  }

  /** Arms the item, or moves it to its new due time. */
  arm(item: T): void {
    if (this.closed) return;
    this.heap.upsert(item);
    this.wake();
  }

  disarm(item: T): void {
    this.heap.remove(item);
  }

  /** Stops the timer and forgets every item; arming does nothing any more. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.heap.clear();
  }

  /** Keeps the one Node timer set for the earliest deadline. */
  private wake(): void {
    const first = this.heap.peek();
    if (!first || this.closed) return;
    const due = this.dueOf(first);
    if (this.timer !== undefined && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.expire(), Math.min(Math.max(0, due - this.now()), MAX_TIMER_MS));
    this.timer.unref();
  }

  /** Fires every item now due, earliest first. */
  private expire(): void {
    this.timer = undefined;
    if (this.closed) return;
    const now = this.now();
    for (let first = this.heap.peek(); first && this.dueOf(first) <= now; first = this.heap.peek()) {
      this.heap.remove(first);
      this.fire(first);
    }
    this.wake();
  }
}

/** An item of a DeadlineHeap: its place in the heap, -1 when not in it. */
export interface Indexed {
  heapIndex: number;
}

/**
 * A binary min-heap of items by due time, each item knowing its own place, so a deadline that moves
 * is updated in place: one entry per item, no cancelled garbage.
 */
export class DeadlineHeap<T extends Indexed> {
  private items: T[] = [];

  /** @param dueOf the due time of an item in the heap */
  constructor(private readonly dueOf: (item: T) => number) {}

  peek(): T | undefined {
    return this.items[0];
  }

  clear(): void {
    for (const item of this.items) item.heapIndex = -1;
    this.items = [];
  }

  /** Adds the item, or moves it to where its (new) due time belongs. */
  upsert(item: T): void {
    if (item.heapIndex < 0) {
      item.heapIndex = this.items.length;
      this.items.push(item);
    }
    this.down(this.up(item.heapIndex));
  }

  remove(item: T): void {
    const index = item.heapIndex;
    if (index < 0) return;
    item.heapIndex = -1;
    const last = this.items.pop()!;
    if (last === item) return;
    this.items[index] = last;
    last.heapIndex = index;
    this.down(this.up(index));
  }

  private due(index: number): number {
    return this.dueOf(this.items[index]!);
  }

  private swap(a: number, b: number): void {
    const x = this.items[a]!;
    const y = this.items[b]!;
    this.items[a] = y;
    this.items[b] = x;
    y.heapIndex = a;
    x.heapIndex = b;
  }

  private up(index: number): number {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (this.due(parent) <= this.due(index)) break;
      this.swap(parent, index);
      index = parent;
    }
    return index;
  }

  private down(index: number): void {
    const n = this.items.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= n) return;
      const right = left + 1;
      const child = right < n && this.due(right) < this.due(left) ? right : left;
      if (this.due(index) <= this.due(child)) return;
      this.swap(index, child);
      index = child;
    }
  }
}

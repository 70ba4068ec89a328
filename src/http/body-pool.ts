import { STREAMED_FROM } from './respond.js';

/**
 * Memory for answer bodies made anew per request (a page of station records: tens to hundreds of
 * kilobytes), taken from a pool and given back once the answer is written. A fresh buffer of that size
 * is a new allocation every request: memory the kernel hands over page by page when first written (on
 * the machines measured, a fresh 122 kB buffer filled cost 29-37 µs of CPU against 1.2 µs for one
 * written before), and external memory that hastens the garbage collector. uWS copies a body
 * when it is written (`end`), so the same memory can hold the next request's answer.
 *
 * Only the HTTP core gives a body back (./server.ts, once the answer is written and no observer of its
 * family can keep it), and only bodies taken here: a buffer from anywhere else is left alone, and one
 * given back twice is taken back once. A body that is never given back (its request answered by its
 * deadline first) is collected as any buffer is; an aborted request's body is given back.
 */

/** The smallest size kept: below it Node's own pool serves `allocUnsafe` without an allocation of its own. */
const SMALLEST = 4 * 1024;

export class BodyPool {
  /** Free buffers per size class (the class's size is SMALLEST << index). */
  private readonly free: ArrayBuffer[][];
  /** The memory of the bodies out now: only these are taken back, each once. */
  private readonly out = new WeakSet<ArrayBuffer>();

  /**
   * `largest`: bodies of this many bytes or more are made fresh and never pooled (the HTTP core writes
   * those as the connection takes them, from the buffer itself, after the request's turn:
   * ./respond.ts `STREAMED_FROM`). `keep`: free buffers kept per size class.
   */
  constructor(
    private readonly largest: number,
    private readonly keep = 8,
  ) {
    this.free = Array.from({ length: classOf(largest) + 1 }, () => []);
  }

  /** A buffer of `length` bytes, its contents undefined (as `Buffer.allocUnsafe`'s). */
  take(length: number): Buffer {
    if (length < SMALLEST || length >= this.largest) return Buffer.allocUnsafe(length);
    const index = classOf(length);
    const memory = this.free[index]!.pop() ?? new ArrayBuffer(SMALLEST << index);
    this.out.add(memory);
    return Buffer.from(memory, 0, length);
  }

  /** Gives back a body once nothing will read it again; anything not taken here (or already given back) is ignored. */
  give(body: unknown): void {
    if (!Buffer.isBuffer(body) || body.byteOffset !== 0) return;
    const memory = body.buffer;
    if (!(memory instanceof ArrayBuffer) || !this.out.has(memory)) return;
    this.out.delete(memory);
    const list = this.free[classOf(memory.byteLength)]!;
    if (list.length < this.keep) list.push(memory);
  }

  /** Free buffers kept now, over every size class (for the tests). */
  get kept(): number {
    let n = 0;
    for (const list of this.free) n += list.length;
    return n;
  }
}

/** The size class that holds `length` bytes: the smallest SMALLEST << k at least as large. */
function classOf(length: number): number {
  let index = 0;
  while (SMALLEST << index < length) index++;
  return index;
}

/** The pool of the HTTP core's answers (bodies from ./respond.ts `STREAMED_FROM` up are never pooled). */
export const answerBodies = new BodyPool(STREAMED_FROM);

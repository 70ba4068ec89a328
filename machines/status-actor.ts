import type { Category, PublishedReading } from '../src/domain/categories/index.js';
import type { Freshness, FreshnessSnapshot } from './freshness.js';
import type { Deadline } from './runner.js';

/** One station and category: the published reading, its freshness machine's snapshot and its next deadline. */
export interface Actor {
  readonly hrsId: string;
  readonly category: Category;
  reading: PublishedReading;
  originatorId: string;
  /**
   * The freshness machine's snapshot; undefined after a signal (FreshnessRunner.classify takes the
   * machine's step without it) until a deadline needs it: it is then the machine's start from the last
   * signal (the reading's `datetime`, handled at `enteredAt`).
   */
  snapshot: FreshnessSnapshot | undefined;
  /** When the last signal was handled (epoch ms): with the reading's `datetime`, the machine's input. */
  enteredAt: number;
  /** The snapshot's freshness, kept beside it. */
  freshness: Freshness;
  /** The deadline the machine is waiting for (undefined: none), due at `due` (epoch ms). */
  deadline: Deadline | undefined;
  due: number;
  /** Where the actor sits in the deadline heap (-1: not there, nothing pending). */
  heapIndex: number;
  /**
   * The published section as JSON ('null' when not published), for change detection and reads;
   * undefined until read after a change (the import path does not pay for serialising).
   */
  json: string | undefined;
}

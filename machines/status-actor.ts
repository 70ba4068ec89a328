import type { Category, PublishedReading } from '../src/domain/categories/index.js';
import type { Freshness, FreshnessInput, FreshnessSnapshot } from './freshness.js';
import type { Delayed } from './runner.js';

/** One station and category: the published reading, its freshness machine's snapshot and its next deadline. */
export interface Actor {
  readonly hrsId: string;
  readonly category: Category;
  reading: PublishedReading;
  originatorId: string;
  /**
   * The freshness machine's snapshot; undefined after a signal (FreshnessRunner.classify takes the
   * machine's step without it) until a deadline needs it: it is then the machine's start from `entered`.
   */
  snapshot: FreshnessSnapshot | undefined;
  /** The last signal as the machine took it (policy, reading time, when handled). */
  entered: FreshnessInput;
  /** The snapshot's freshness, kept beside it. */
  freshness: Freshness;
  /** The delayed event the machine is waiting for. */
  pending: Delayed | undefined;
  /** Where the actor sits in the deadline heap (-1: not there, nothing pending). */
  heapIndex: number;
  /**
   * The published section as JSON ('null' when not published), for change detection and reads;
   * undefined until read after a change (the import path does not pay for serialising).
   */
  json: string | undefined;
}

/** What every `test/bench/<name>.bench.ts` exports as its default. */
export interface Scenario {
  /** One line printed above the scenario's results. */
  description: string;
  run(options: BenchOptions): Promise<void>;
}

export interface BenchOptions {
  /** Measured seconds per target (BENCH_DURATION, default 10). */
  durationSeconds: number;
  /** Unmeasured seconds of load before each measurement (BENCH_WARMUP, default 1; 0 skips it). */
  warmupSeconds: number;
  /** Concurrent connections of the load generator (BENCH_CONNECTIONS, default 50). */
  connections: number;
  /** Prints a line of the scenario's output. */
  print(line?: string): void;
}

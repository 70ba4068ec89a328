import { setup, createActor, assign } from 'xstate';
const m = setup({
  types: { context: {} as { datetime: number; at: number; stale: number; unknown: number }, events: {} as { type: 'signal'; datetime: number; now: number } },
  delays: {
    untilStale: ({ context }) => Math.max(0, context.datetime + context.stale - context.at),
    untilUnknown: ({ context }) => Math.max(0, context.datetime + context.unknown - context.at),
  },
}).createMachine({
  id: 'freshness',
  context: ({ input }: any) => ({ datetime: input.datetime, at: input.now, stale: 300000, unknown: 1800000 }),
  initial: 'fresh',
  states: {
    fresh: { after: { untilStale: { target: 'stale', actions: assign({ at: ({ context }) => context.datetime + context.stale }) } } },
    stale: { after: { untilUnknown: { target: 'unknown' } } },
    unknown: {},
  },
  on: { signal: { target: '.fresh', reenter: true, actions: assign({ datetime: ({ event }) => event.datetime, at: ({ event }) => event.now }) } },
});
const N = Number(process.argv[2] ?? 400000);
global.gc?.();
const before = process.memoryUsage();
const t0 = performance.now();
const actors = new Map<string, any>();
const now = Date.now();
for (let i = 0; i < N; i++) {
  const a = createActor(m, { input: { datetime: now - (i % 1000) * 1000, now } });
  a.start();
  actors.set('S' + i, a);
}
const t1 = performance.now();
global.gc?.();
const after = process.memoryUsage();
console.log(N, 'actors', ((t1 - t0) / 1000).toFixed(2), 's', 'heap MB', ((after.heapUsed - before.heapUsed) / 1e6).toFixed(0), 'rss MB', (after.rss / 1e6).toFixed(0), 'per actor B', ((after.heapUsed - before.heapUsed) / N).toFixed(0));
const t2 = performance.now();
for (let i = 0; i < 100000; i++) actors.get('S' + (i % N)).send({ type: 'signal', datetime: Date.now(), now: Date.now() });
console.log('100k sends', ((performance.now() - t2)).toFixed(0), 'ms');
process.exit(0);

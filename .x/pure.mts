import { setup, assign, transition, initialTransition } from 'xstate';
const m = setup({
  types: { context: {} as { datetime: number; at: number }, events: {} as { type: 'signal'; datetime: number; now: number } | { type: 'tick'; now: number }, input: {} as { datetime: number; now: number } },
  delays: {
    untilStale: ({ context }) => Math.max(0, context.datetime + 300000 - context.at),
    untilUnknown: ({ context }) => Math.max(0, context.datetime + 1800000 - context.at),
  },
}).createMachine({
  id: 'freshness',
  context: ({ input }) => ({ datetime: input.datetime, at: input.now }),
  initial: 'fresh',
  states: {
    fresh: { after: { untilStale: { target: 'stale' } } },
    stale: { after: { untilUnknown: { target: 'unknown' } } },
    unknown: {},
  },
  on: { signal: { target: '.fresh', reenter: true, actions: assign({ datetime: ({ event }) => event.datetime, at: ({ event }) => event.now }) } },
});
const now = Date.now();
const [s0, a0] = initialTransition(m, { datetime: now - 60000, now });
console.log(s0.value, JSON.stringify(a0.map((a: any) => ({ type: a.type, params: a.params })), null, 0).slice(0, 500));
const ev = (a0[0] as any).params.event;
const [s1, a1] = transition(m, s0, ev);
console.log(s1.value, JSON.stringify(a1.map((a: any) => ({ type: a.type, params: a.params }))).slice(0, 500));
const [s2, a2] = transition(m, s1, { type: 'signal', datetime: now, now });
console.log(s2.value, JSON.stringify(a2.map((a: any) => ({ type: a.type, params: a.params }))).slice(0, 500));
const N = 400000;
global.gc?.();
const before = process.memoryUsage().heapUsed;
const t0 = performance.now();
const arr = [];
for (let i = 0; i < N; i++) arr.push(initialTransition(m, { datetime: now - i, now })[0]);
const t1 = performance.now();
global.gc?.();
console.log('init', (t1 - t0).toFixed(0), 'ms; bytes each', ((process.memoryUsage().heapUsed - before) / N).toFixed(0));
const t2 = performance.now();
for (let i = 0; i < 100000; i++) arr[i] = transition(m, arr[i], { type: 'signal', datetime: now, now })[0];
console.log('100k transitions', (performance.now() - t2).toFixed(0), 'ms');
{
  const { createActor } = await import('xstate');
  const self = createActor(m);
  let sink: any[] = [];
  const scope: any = { self, defer: () => {}, id: '', logger: () => {}, sessionId: '', stopChild: () => {}, system: self.system, emit: () => {}, actionExecutor: (a: any) => sink.push(a) };
  const t0 = performance.now();
  const arr2 = [];
  for (let i = 0; i < N; i++) { sink = []; arr2.push(m.getInitialSnapshot(scope, { datetime: now - i, now })); }
  console.log('shared scope init', (performance.now() - t0).toFixed(0), 'ms', sink.length, JSON.stringify(sink[0]?.params));
  const t2 = performance.now();
  for (let i = 0; i < 100000; i++) { sink = []; arr2[i] = m.transition(arr2[i], { type: 'signal', datetime: now, now }, scope); }
  console.log('shared scope 100k transitions', (performance.now() - t2).toFixed(0), 'ms', sink.length, arr2[0].value);
}

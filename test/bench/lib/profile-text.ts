/**
 * A V8 CPU profile as text (`<profile>.txt` beside each `.cpuprofile` the bench writes): the time
 * spent in each function by itself, most first, and a flame graph as an indented tree (each function's
 * callees, merged by name, with their share of the profile's time, widest first). What a flame graph
 * shows, readable in a terminal and quotable in a review. `npx tsx test/bench/lib/profile-text.ts FILE`
 * prints one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `name file:line`, the file without its folders (node_modules' package kept). */
function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  const file = url === '' ? '' : `${pkg ? `${pkg}/` : ''}${url.slice(url.lastIndexOf('/') + 1)}:${lineNumber + 1}`;
  return `${functionName || '(anonymous)'}${file ? ` ${file}` : ''}`;
}

/** The profile as text: the busy time, the top `selfRows` by self time, the tree down to `minShare` of the whole. */
export function profileText(profile: Profile, { selfRows = 30, minShare = 0.005, maxDepth = 14 } = {}): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const inclusive = new Map<number, number>();
  const sum = (id: number): number => {
    const known = inclusive.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    let t = self.get(id) ?? 0;
    for (const child of node.children ?? []) t += sum(child);
    inclusive.set(id, t);
    return t;
  };
  const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
  const idle = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);
  const lines = [`${(total / 1000).toFixed(0)} ms profiled, ${pct(total - idle).trim()} busy (the rest idle: waiting for the network or a timer)`, '', 'Self time by function:'];
  const selfByName = new Map<string, number>();
  for (const [id, t] of self) {
    const name = frameName(byId.get(id)!);
    selfByName.set(name, (selfByName.get(name) ?? 0) + t);
  }
  for (const [name, t] of [...selfByName].sort((a, b) => b[1] - a[1]).slice(0, selfRows)) lines.push(`${pct(t)}  ${name}`);
  lines.push('', 'Flame graph (callees under their callers, merged by name, widest first):');
  const walk = (ids: number[], depth: number) => {
    if (depth > maxDepth) return;
    const groups = new Map<string, number[]>();
    for (const id of ids) {
      for (const child of byId.get(id)!.children ?? []) {
        const name = frameName(byId.get(child)!);
        const group = groups.get(name);
        if (group) group.push(child);
        else groups.set(name, [child]);
      }
    }
    const ranked = [...groups].map(([name, members]) => ({ name, members, t: members.reduce((a, id) => a + sum(id), 0) })).sort((a, b) => b.t - a.t);
    for (const { name, members, t } of ranked) {
      if (t / total < minShare) continue;
      lines.push(`${pct(t)}  ${'  '.repeat(depth)}${name}`);
      walk(members, depth + 1);
    }
  };
  const root = profile.nodes[0];
  if (root) walk([root.id], 0);
  return `${lines.join('\n')}\n`;
}

/** Writes `<file minus .cpuprofile>.txt` beside a profile; its path. */
export function writeProfileText(file: string): string {
  const out = file.replace(/\.cpuprofile$/, '') + '.txt';
  writeFileSync(out, profileText(JSON.parse(readFileSync(file, 'utf8')) as Profile));
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npx tsx test/bench/lib/profile-text.ts FILE.cpuprofile');
    process.exit(2);
  }
  process.stdout.write(profileText(JSON.parse(readFileSync(file, 'utf8')) as Profile));
}

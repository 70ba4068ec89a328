/**
 * Error bodies shaped as the import API reports them: an object mapping field names to arrays of
 * messages; a nested object for a nested object; for a list of entries, an array aligned with the
 * entries (`{}` for good ones). Messages about a value as a whole go under `non_field_errors`.
 */

type Path = readonly (string | number)[];

interface Node {
  messages: string[];
  children: Map<string | number, Node>;
}

const node = (): Node => ({ messages: [], children: new Map() });

export class ErrorTree {
  private readonly root = node();
  /** The messages added (each once per place). */
  count = 0;

  add(path: Path, message: string): void {
    let at = this.root;
    for (const key of path) {
      let next = at.children.get(key);
      if (!next) {
        next = node();
        at.children.set(key, next);
      }
      at = next;
    }
    if (at.messages.includes(message)) return;
    at.messages.push(message);
    this.count++;
  }

  get empty(): boolean {
    return this.root.messages.length === 0 && this.root.children.size === 0;
  }

  /** The body for one value, aligned with the value as sent (`raw`). */
  toJSON(raw: unknown): Record<string, unknown> {
    return build(this.root, raw) as Record<string, unknown>;
  }
}

function build(at: Node, raw: unknown): unknown {
  const out: Record<string, unknown> = {};
  if (at.messages.length > 0) out.non_field_errors = [...at.messages];
  for (const [key, child] of at.children) {
    const value = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>)[key as string] : undefined;
    const indexed = [...child.children.keys()].some((k) => typeof k === 'number');
    if (indexed && Array.isArray(value)) {
      if (child.messages.length > 0) {
        out[key] = [...child.messages];
        continue;
      }
      out[key] = value.map((item, index) => {
        const entry = child.children.get(index);
        return entry ? build(entry, item) : {};
      });
    } else if (child.children.size === 0) {
      out[key] = [...child.messages];
    } else {
      const nested = build(child, value) as Record<string, unknown>;
      out[key] = nested;
    }
  }
  return out;
}

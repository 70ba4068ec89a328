import { z } from 'zod';

/**
 * The text fields of a zod schema, found by walking it as zod 4 describes it (`_zod.def`): every place
 * a JSON string may stand in the input, with its path from the root (array items at index 0, a record's
 * values under an `*` key) and what bounds it. Tests build their inputs from this list, so that a field
 * added to a schema is covered without being named.
 */

export type FieldPath = (string | number)[];

export interface TextField {
  path: FieldPath;
  /** The string schema itself (or the enum or literal). */
  schema: z.ZodType;
  /** `string` (free text, formats included), `choice` (an enum or a literal). */
  kind: 'string' | 'choice';
  /** The length limit the schema checks first, aborting (nothing else reads a longer value), if it does. */
  boundedFirst?: number;
  /** Every length limit it checks (aborting or not, in any place). */
  maxLength?: number;
}

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
type Check = { _zod: { def: { check: string; maximum?: number; abort?: boolean } } };

/** The maximum of a string schema's first check when it is an aborting length check; and its smallest maximum. */
function bounds(schema: z.ZodType): Pick<TextField, 'boundedFirst' | 'maxLength'> {
  const checks = ((defOf(schema).checks ?? []) as Check[]).map((c) => c._zod.def);
  const maxima = checks.filter((c) => c.check === 'max_length' && typeof c.maximum === 'number').map((c) => c.maximum!);
  const first = checks[0];
  return {
    ...(first?.check === 'max_length' && first.abort === true ? { boundedFirst: first.maximum! } : {}),
    ...(maxima.length > 0 ? { maxLength: Math.min(...maxima) } : {}),
  };
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch', 'success']);

/** Every text field of `schema` as input (a pipe's input side; past an `unknown` input, its output side). */
export function textFields(schema: z.ZodType): TextField[] {
  const found = new Map<string, TextField>();
  const seen = new Set<z.ZodType>();
  const walk = (node: z.ZodType, path: FieldPath): void => {
    const def = defOf(node);
    if (def.type === 'lazy') {
      if (seen.has(node)) return;
      seen.add(node);
      walk((def.getter as () => z.ZodType)(), path);
      return;
    }
    if (WRAPPERS.has(def.type)) return walk(def.innerType as z.ZodType, path);
    const key = JSON.stringify(path);
    switch (def.type) {
      case 'string':
        if (!found.has(key)) found.set(key, { path, schema: node, kind: 'string', ...bounds(node) });
        return;
      case 'enum':
      case 'literal':
        if (!found.has(key)) found.set(key, { path, schema: node, kind: 'choice' });
        return;
      case 'object': {
        for (const [name, field] of Object.entries(def.shape as Record<string, z.ZodType>)) walk(field, [...path, name]);
        if (def.catchall) walk(def.catchall as z.ZodType, [...path, '*']);
        return;
      }
      case 'array':
        return walk(def.element as z.ZodType, [...path, 0]);
      case 'tuple':
        (def.items as z.ZodType[]).forEach((item, i) => walk(item, [...path, i]));
        return;
      case 'record':
        return walk(def.valueType as z.ZodType, [...path, '*']);
      case 'union':
        for (const option of def.options as z.ZodType[]) walk(option, path);
        return;
      case 'intersection':
        walk(def.left as z.ZodType, path);
        walk(def.right as z.ZodType, path);
        return;
      case 'pipe': {
        const input = def.in as z.ZodType;
        const opaque = ['unknown', 'any', 'transform'].includes(defOf(input).type);
        return walk(opaque ? (def.out as z.ZodType) : input, path);
      }
      default:
        return;
    }
  };
  walk(schema, []);
  return [...found.values()];
}

/** The first example a schema (or what it wraps) carries in its metadata, if any. */
export function exampleOf(schema: z.ZodType): unknown {
  let node: z.ZodType | undefined = schema;
  for (let depth = 0; node && depth < 10; depth++) {
    const examples = z.globalRegistry.get(node)?.examples as unknown[] | undefined;
    if (examples && examples.length > 0) return examples[0];
    const def = defOf(node);
    node = WRAPPERS.has(def.type) ? (def.innerType as z.ZodType) : def.type === 'pipe' ? (def.out as z.ZodType) : undefined;
  }
  return undefined;
}

/** A copy of `base` with `value` at `path` (objects and arrays made where missing; `*` as a key of its own). */
export function withValueAt(base: unknown, path: FieldPath, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list = Array.isArray(base) ? [...base] : [];
    list[head] = withValueAt(list[head], rest, value);
    return list;
  }
  const object = base !== null && typeof base === 'object' && !Array.isArray(base) ? { ...(base as Record<string, unknown>) } : {};
  const name = head === '*' ? 'extra_field' : head!;
  object[name] = withValueAt(object[name], rest, value);
  return object;
}

/** The value at `path` in `base`, if there is one. */
export function valueAt(base: unknown, path: FieldPath): unknown {
  let node = base;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[part === '*' ? 'extra_field' : part];
  }
  return node;
}

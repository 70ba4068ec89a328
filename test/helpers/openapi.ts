/**
 * Checking a served OpenAPI document the same way in every documents test: Ajv over the whole
 * document (any JSON pointer into it compiles as a schema, `$ref`s resolved), local `$ref`s followed,
 * and every example in it validated against its schema.
 */
import type { Test } from 'tap';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv and ajv-formats are CommonJS: their default export is the module object under NodeNext.
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
type AddFormats = typeof addFormatsModule.default;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

type Json = Record<string, any>;

/** Validates `value` against the schema at `parts` (a path into the document); the errors, or null. */
export type SchemaCheck = (parts: (string | number)[], value: unknown) => string | null;

/** Ajv over a whole document, and the check of a value against any schema in it. */
export function documentAjv(document: Json): { ajv: InstanceType<AjvClass>; check: SchemaCheck } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const base = 'https://docs.invalid/openapi.json';
  ajv.addSchema(document, base);
  const cache = new Map<string, ReturnType<typeof ajv.compile>>();
  const pointer = (parts: (string | number)[]) => parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  return {
    ajv,
    check(parts, value) {
      const ref = `${base}#/${pointer(parts)}`;
      let validate = cache.get(ref);
      if (!validate) cache.set(ref, (validate = ajv.compile({ $ref: ref })));
      return validate(value) ? null : ajv.errorsText(validate.errors);
    },
  };
}

/** Follows a local `$ref`. */
export function deref(document: Json, value: Json): Json {
  if (typeof value?.$ref !== 'string') return value;
  let at: any = document;
  for (const part of value.$ref.slice(2).split('/')) at = at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (at === undefined) throw new Error(`dangling ${value.$ref}`);
  return deref(document, at);
}

/**
 * Asserts that every example in the document validates against its schema: a schema's `examples` (an
 * array of values), and a media type's or parameter's `example` / `examples` (Example Objects, `$ref`s
 * followed). `label` prefixes each assertion's name. Returns how many were checked.
 */
export function checkExamples(t: Test, document: Json, check: SchemaCheck, label = ''): number {
  let count = 0;
  const walk = (value: unknown, path: (string | number)[], inSchema: boolean) => {
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, [...path, i], inSchema));
    if (value === null || typeof value !== 'object') return;
    const node = value as Json;
    if (inSchema && Array.isArray(node.examples)) {
      node.examples.forEach((example: unknown, i: number) => {
        count++;
        t.equal(check(path, example), null, `${label}${path.join('/')} examples[${i}]`);
      });
    }
    if (!inSchema && node.schema && node.examples && typeof node.examples === 'object') {
      for (const [name, example] of Object.entries(node.examples as Record<string, Json>)) {
        count++;
        t.equal(check([...path, 'schema'], deref(document, example).value), null, `${label}${path.join('/')} example ${name}`);
      }
    }
    if (!inSchema && node.schema && 'example' in node) {
      count++;
      t.equal(check([...path, 'schema'], node.example), null, `${label}${path.join('/')} example`);
    }
    for (const [key, child] of Object.entries(node)) {
      if (inSchema && (key === 'examples' || key === 'example')) continue;
      walk(child, [...path, key], inSchema || key === 'schema' || path.at(-1) === 'schemas');
    }
  };
  walk(document, [], false);
  return count;
}

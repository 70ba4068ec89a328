import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ALL,
  CATEGORIES,
  CATEGORY,
  SECTION_KEY_LIST,
  SECTION_KEYS,
  freshnessPolicies,
  inWords,
  isCategory,
  turnsUnknown,
} from '../../src/domain/categories/index.js';
import { buildSection } from '../../src/domain/status/sections.js';
import { SIGNAL_TYPES } from '../../src/registry/edit-rules.js';
import { PAGE_WORDS } from '../../src/domain/page-words.js';
import { constantsModule } from '../../src/http/page-files.js';

/**
 * The signal categories have one home (src/domain/categories/): the migrations' CHECK lists and the
 * browser pages' own lists agree with it, and every category has all its parts.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIGRATIONS = join(ROOT, 'db/migrations');

/** A CHECK list of text values on one column: where it was last defined and what it allows. */
interface CheckList {
  column: string;
  migration: string;
  values: string[];
}

/**
 * The latest CHECK list of each `table.column` over the migrations in order: a CHECK in a CREATE TABLE
 * or an ALTER TABLE (ADD COLUMN, ADD CONSTRAINT) belongs to the table named last before it.
 */
function checkLists(folder: string): Map<string, CheckList> {
  const lists = new Map<string, CheckList>();
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.sql')).sort()) {
    const sql = readFileSync(join(folder, file), 'utf8').replace(/--[^\n]*/g, '');
    const tables = [...sql.matchAll(/\b(?:CREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?|ALTER\s+TABLE(?:\s+IF\s+EXISTS)?(?:\s+ONLY)?)\s+([a-z_][a-z0-9_.]*)/gi)];
    for (const check of sql.matchAll(/CHECK\s*\(\s*([a-z_][a-z0-9_]*)\s+IN\s*\(([^)]*)\)/gi)) {
      const table = tables.filter((m) => m.index < check.index).at(-1)?.[1];
      if (!table) continue;
      const values = [...check[2]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
      if (values.length === 0) continue;
      const column = `${table}.${check[1]}`;
      lists.set(column, { column, migration: file, values });
    }
  }
  return lists;
}

t.test('every CHECK list naming a category lists exactly the categories (the latest definition of each)', async (t) => {
  const naming = [...checkLists(MIGRATIONS).values()].filter((list) => list.values.some(isCategory));
  t.ok(naming.length >= 4, `the category and signal_type columns are found (${naming.map((l) => l.column).join(', ')})`);
  for (const list of naming) {
    // Assignments carry the legacy import's `v1` beside the categories.
    const expected = list.column === 'assignments.signal_type' ? [...SIGNAL_TYPES] : [...CATEGORIES];
    t.strictSame([...list.values].sort(), expected.sort(), `${list.column} (${list.migration})`);
  }
});

t.test('the migration reader takes the latest definition of a constraint', async (t) => {
  const folder = join(ROOT, 'test/fixtures/categories');
  const lists = checkLists(folder);
  t.strictSame(lists.get('signals.category'), { column: 'signals.category', migration: '0002_widen.sql', values: ['a', 'b', 'c'] });
  t.strictSame(lists.get('assignments.signal_type')?.values, ['a', 'v1'], 'a CHECK in an ALTER TABLE … ADD COLUMN');
  t.equal(lists.has('signals.state'), true, 'other lists are read too');
});

t.test('each category has all its parts', async (t) => {
  const settings = { staleAfterMs: 1, unknownAfterMs: 2, pricingStaleAfterMs: 3 };
  const policies = freshnessPolicies(settings);
  t.strictSame(Object.keys(CATEGORY), [...CATEGORIES], 'listed by name, in order');
  t.equal(new Set(SECTION_KEY_LIST).size, CATEGORIES.length, 'section keys are distinct');
  for (const d of ALL) {
    t.test(d.name, async (t) => {
      t.match(d.name, /^[a-z]+(-[a-z]+)*$/, 'the name is a path segment');
      t.equal(d.sectionKey, d.name.replaceAll('-', '_'), 'the section key is the name in snake case');
      t.equal(SECTION_KEYS[d.name as keyof typeof SECTION_KEYS], d.sectionKey);
      t.ok(d.label.length > 0, 'a label');
      t.equal(policies[d.name as keyof typeof policies]!.staleAfterMs, settings[d.freshness.stale], 'deadlines from the settings');
      t.equal(turnsUnknown(d.name as (typeof CATEGORIES)[number]), d.freshness.unknown !== null);
      const examples = (d.transmission.meta()?.examples ?? []) as unknown[];
      t.ok(examples.length > 0, 'the transmission schema has examples');
      t.equal(d.docs.examples.length, examples.length, 'the document names each of them');
      for (const example of examples) t.ok(d.transmission.safeParse(example).success, 'each example passes the schema');
      t.ok(d.docs.component && d.docs.operationId && d.docs.summary && d.docs.rules, 'the import v2 document has its words');
      t.ok(d.section.component && d.section.nullWhen, 'the export v2 document has its words');
      t.ok(d.section.schema.safeParse(d.section.example).success, 'the section example passes the section schema');
      const built = buildSection(d.name as (typeof CATEGORIES)[number], { datetime: 0, receivedAt: 0, payload: {} }, null, 'fresh');
      t.ok(built === null || d.section.schema.safeParse(built).success, 'an empty snapshot builds a valid section or none');
    });
  }
});

t.test('categories in running text', async (t) => {
  t.equal(inWords(['hydrogen-storage', 'pricing']), 'hydrogen storage and pricing');
  t.equal(inWords(['availability', 'usage', 'pricing']), 'availability, usage and pricing');
  t.equal(inWords(['usage']), 'usage');
});

/** The ES module the pages' routes serve as `vocabulary.js`, imported as a browser imports it. */
async function servedVocabulary(): Promise<Record<string, unknown>> {
  return (await import(`data:text/javascript,${encodeURIComponent(constantsModule(PAGE_WORDS))}`)) as Record<string, unknown>;
}

/** Every browser script under src/browser/, by its path from the root. */
function browserScripts(): { path: string; text: string }[] {
  const dir = join(ROOT, 'src/browser');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.js'))
    .map((name) => ({ path: `src/browser/${name}`, text: readFileSync(join(dir, name), 'utf8') }));
}

t.test('the browser pages take the categories from the vocabulary their routes serve, and hold no copy', async (t) => {
  const words = await servedVocabulary();
  t.strictSame(words.CATEGORIES, ALL.map((d) => ({ name: d.name, key: d.sectionKey, label: d.label })), 'name, key and label of each, in order');
  t.strictSame(words.SIGNAL_TYPES, [...SIGNAL_TYPES], "the portal's assignments: the registry's signal types");
  // A category whose three forms differ (hydrogen storage): no script spells any of them, but for the
  // `case` of a summary that reads its section's own fields (the dashboard's cells.js).
  const spelled = ALL.filter((d) => d.name !== d.sectionKey).flatMap((d) => [d.name, d.sectionKey, d.label]);
  t.ok(spelled.length > 0, 'a category with a name apart from its key');
  for (const { path, text } of browserScripts()) {
    const copies = spelled.filter((word) => new RegExp(`(?<!case )['"]${word}['"]`, 'i').test(text));
    t.strictSame(copies, [], `${path}: no copy of a category's words`);
  }
});

import { availability } from './availability.js';
import type { CategoryDefinition, FreshnessPolicy, FreshnessSettings } from './definition.js';
import { hydrogenStorage } from './hydrogen-storage.js';
import { pricing } from './pricing.js';
import { usage } from './usage.js';

/**
 * The signal categories, each with one home: a file beside this one holds everything the platform
 * knows of it (its names on the wire, freshness deadlines, import v2 schema and rules, export v2
 * section schema and builder, and its words in documents and charts). Every other module reads them
 * here: the live status and the history replay, import v2, the export v2 status and history, the
 * admins' feed, DATEX II, the portal, the registry's assignments and the queries.
 *
 * Adding a fifth category takes:
 * - its file here, exporting its `CategoryDefinition`, and its place in `DEFINITIONS` below (the order
 *   of the status object, the documents and the charts);
 * - one migration that widens the CHECK lists naming the categories (the `category` columns of
 *   `signal_latest`, `published_signals` and `signal_history`, and `assignments.signal_type`):
 *   test/unit/status-rules.test.ts compares the latest of each with this list;
 * - the tests: its transmissions, section and freshness (test/unit/status-rules.test.ts checks that it has
 *   every part, and that its examples pass its schemas);
 * The documents, the status object, the history, the admins' feed and the browser pages (their
 * `vocabulary.js`, ../page-words.ts) follow from this list.
 *
 * The four files are alike in shape on purpose: each fills the same `CategoryDefinition` (./definition.ts)
 * with its own values, schemas and examples; what they share (field builders, envelope, section times)
 * is already in import-v2/fields.ts and export-v2/section-fields.ts.
 */

export type { CategoryDefinition, FreshnessPolicy, FreshnessSettings, PublishedReading } from './definition.js';
export { lowStorage } from './hydrogen-storage.js';

/** Every category, in the order of the status object. */
export const DEFINITIONS = [availability, usage, hydrogenStorage, pricing] as const;

/** The same, each seen through the one shape every category has. */
export const ALL: readonly CategoryDefinition[] = DEFINITIONS;

type Definitions = typeof DEFINITIONS;
type Definition = Definitions[number];
type Names<T> = { readonly [K in keyof T]: T[K] extends { name: infer N } ? N : never };
type Keys<T> = { readonly [K in keyof T]: T[K] extends { sectionKey: infer N } ? N : never };

/** A category's name: the import v2 path's signal type (`hydrogen-storage`). */
export type Category = Definition['name'];
/** A category's key in the status object and wherever categories stand side by side (`hydrogen_storage`). */
export type SectionKey = Definition['sectionKey'];

/** The categories' names, in order. */
export const CATEGORIES = DEFINITIONS.map((d) => d.name) as unknown as Names<Definitions>;
/** The categories' section keys, in order. */
export const SECTION_KEY_LIST = DEFINITIONS.map((d) => d.sectionKey) as unknown as Keys<Definitions>;

/** Each category by name. */
export const CATEGORY = Object.fromEntries(DEFINITIONS.map((d) => [d.name, d])) as { readonly [D in Definition as D['name']]: D };

/** The status object's key for each category. */
export const SECTION_KEYS = Object.fromEntries(DEFINITIONS.map((d) => [d.name, d.sectionKey])) as {
  readonly [D in Definition as D['name']]: D['sectionKey'];
};

export function isCategory(value: string): value is Category {
  return Object.hasOwn(CATEGORY, value);
}

/** A value per category, keyed by name, in order. */
export const byCategory = <T>(make: (definition: CategoryDefinition) => T): Record<Category, T> =>
  Object.fromEntries(DEFINITIONS.map((d) => [d.name, make(d)])) as Record<Category, T>;

/** A value per category, keyed by section key, in order. */
export const bySectionKey = <T>(make: (definition: CategoryDefinition) => T): Record<SectionKey, T> =>
  Object.fromEntries(DEFINITIONS.map((d) => [d.sectionKey, make(d)])) as Record<SectionKey, T>;

/** Every category's deadlines from the platform's settings (the live status and the history replay). */
export const freshnessPolicies = (settings: FreshnessSettings): Record<Category, FreshnessPolicy> =>
  byCategory(({ freshness }) => ({
    staleAfterMs: settings[freshness.stale],
    unknownAfterMs: freshness.unknown === null ? null : settings[freshness.unknown],
  }));

/** Categories in running text: 'hydrogen storage and pricing'. */
export function inWords(categories: readonly Category[]): string {
  const words = categories.map((c) => CATEGORY[c].label.toLowerCase());
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** Whether a category's reading falls back to unknown when no signal follows (availability, usage). */
export const turnsUnknown = (category: Category): boolean => CATEGORY[category].freshness.unknown !== null;

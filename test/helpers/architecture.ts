import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';

/**
 * The architecture checker: reads the import graph of a source tree with the TypeScript parser (so
 * comments and strings never count as imports) and holds it against rules given as data. Every path
 * it speaks of is relative to the root it was given, with forward slashes, as in `src/http/router.ts`.
 */

/** How a file names another: each form the parser recognises. */
export type ImportForm = 'import' | 'import type' | 'side-effect' | 'export from' | 'dynamic import' | 'import require' | 'type import';

/** One project import: `file` names `target` (a repository path) on `line` through `specifier`. */
export interface ProjectImport {
  file: string;
  line: number;
  form: ImportForm;
  specifier: string;
  target: string;
  /** Whether `target` is a file in the tree. */
  exists: boolean;
}

/**
 * A path pattern: `dir/**` is everything under `dir/`, anything else is one exact path.
 * Deliberately this small, so a rule reads the same to a person as to the checker.
 */
export type PathPattern = string;

/**
 * An import rule. Files matching `from` may import only what matches `only`, never what matches
 * `never`, and, with `resolves`, only files that exist. `reason` says in one line why the rule holds.
 */
export interface ImportRule {
  from: PathPattern[];
  only?: PathPattern[];
  never?: PathPattern[];
  resolves?: true;
  reason: string;
}

/** A broken rule at one place: what `file` does on `line` (naming `target`), the rule and its reason. */
export interface Violation {
  file: string;
  line: number;
  target: string;
  rule: string;
  reason: string;
}

/** Whether a repository path matches a pattern (see `PathPattern`). */
export function matches(path: string, pattern: PathPattern): boolean {
  return pattern.endsWith('/**') ? path.startsWith(pattern.slice(0, -2)) : path === pattern;
}

const matchesAny = (path: string, patterns: PathPattern[]) => patterns.some((p) => matches(path, p));

/** The rule written out as a sentence, e.g. `src/domain/** imports only src/domain/**`. */
export function describeRule(rule: ImportRule): string {
  const from = rule.from.join(', ');
  if (rule.only) return `${from} imports only ${rule.only.join(', ')}`;
  if (rule.never) return `${from} never imports ${rule.never.join(', ')}`;
  return `every relative import in ${from} resolves to an existing file`;
}

/** The extensions of the pages' browser modules (plain JavaScript ES modules, src/browser/). */
export const BROWSER_EXTENSIONS = ['.js', '.mjs'];

/**
 * Every file under the given folders of `root` ending in one of `extensions` (`.ts` unless given), as
 * sorted repository paths; missing folders give none.
 */
export function sourceFiles(root: string, dirs: string[], extensions: string[] = ['.ts']): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(path);
      else if (entry.isFile() && extensions.some((e) => entry.name.endsWith(e))) found.push(path);
    }
  };
  for (const dir of dirs) if (existsSync(join(root, dir))) walk(dir);
  return found.sort();
}

/** Whether a file is JavaScript (a browser module), read as it is written rather than as TypeScript's output. */
const isJavaScript = (file: string) => /\.[mc]?jsx?$/.test(file);

/** Parses one file of the tree (as JavaScript or TypeScript by its name); parent pointers are set so nodes can report their lines. */
export function parse(root: string, file: string): ts.SourceFile {
  const kind = isJavaScript(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  return ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true, kind);
}

/** Calls `visit` on every node of a source file, depth first. */
export function walk(source: ts.SourceFile, visit: (node: ts.Node) => void): void {
  const step = (node: ts.Node): void => {
    visit(node);
    ts.forEachChild(node, step);
  };
  step(source);
}

/** The one-based line a node starts on. */
export function lineOf(source: ts.SourceFile, node: ts.Node): number {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
}

/** The literal module name a node carries and the form it is written in, if it is an import of any kind. */
export function moduleNameOf(node: ts.Node): { literal: ts.StringLiteralLike; form: ImportForm } | undefined {
  if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
    const clause = node.importClause;
    const form = !clause ? 'side-effect' : clause.isTypeOnly ? 'import type' : 'import';
    return { literal: node.moduleSpecifier, form };
  }
  if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
    return { literal: node.moduleSpecifier, form: 'export from' };
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    const [argument] = node.arguments;
    if (argument && ts.isStringLiteralLike(argument)) return { literal: argument, form: 'dynamic import' };
  }
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
    const expression = node.moduleReference.expression;
    if (ts.isStringLiteralLike(expression)) return { literal: expression, form: 'import require' };
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
    return { literal: node.argument.literal, form: 'type import' };
  }
  return undefined;
}

/** TypeScript's source extension for the JavaScript one a NodeNext import names. */
const SOURCE_EXTENSION: Record<string, string> = { '.js': '.ts', '.mjs': '.mts', '.cjs': '.cts', '.jsx': '.tsx' };

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/**
 * The repository path a relative specifier names from `file` (from a TypeScript file, `.js` read as its
 * `.ts` source; from a JavaScript one, the file named), and whether it exists; undefined for a bare
 * specifier (a package or `node:` module, not a project file).
 */
export function resolve(root: string, file: string, specifier: string): { target: string; exists: boolean } | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const named = posix.normalize(posix.join(posix.dirname(file), specifier));
  const extension = posix.extname(named);
  const compiled = !isJavaScript(file) && extension in SOURCE_EXTENSION;
  const source = compiled ? named.slice(0, -extension.length) + SOURCE_EXTENSION[extension] : named;
  if (isFile(join(root, source))) return { target: source, exists: true };
  if (isFile(join(root, named))) return { target: named, exists: true };
  return { target: source, exists: false };
}

/** The project imports of one file, in source order. */
export function importsOf(root: string, file: string): ProjectImport[] {
  const source = parse(root, file);
  const found: ProjectImport[] = [];
  walk(source, (node) => {
    const named = moduleNameOf(node);
    if (!named) return;
    const resolved = resolve(root, file, named.literal.text);
    if (!resolved) return;
    found.push({ file, line: lineOf(source, named.literal), form: named.form, specifier: named.literal.text, ...resolved });
  });
  return found;
}

/** One import of a package (a bare specifier such as `redis`, `node:fs` or `@redis/client`): `file` names it on `line`. */
export interface PackageImport {
  file: string;
  line: number;
  form: ImportForm;
  specifier: string;
}

/** The package imports of every `.ts` file under the given folders of `root`, in file and source order. */
export function packageImports(root: string, dirs: string[]): PackageImport[] {
  return sourceFiles(root, dirs).flatMap((file) => {
    const source = parse(root, file);
    const found: PackageImport[] = [];
    walk(source, (node) => {
      const named = moduleNameOf(node);
      if (!named || resolve(root, file, named.literal.text)) return;
      found.push({ file, line: lineOf(source, named.literal), form: named.form, specifier: named.literal.text });
    });
    return found;
  });
}

/**
 * The import graph of the given folders of `root`: every project import of every `.ts` file (or of every
 * file ending in one of `extensions`, as `BROWSER_EXTENSIONS` for the pages' modules).
 */
export function importGraph(root: string, dirs: string[], extensions?: string[]): ProjectImport[] {
  return sourceFiles(root, dirs, extensions).flatMap((file) => importsOf(root, file));
}

/** Whether one import breaks one rule. */
function breaks(rule: ImportRule, edge: ProjectImport): boolean {
  if (!matchesAny(edge.file, rule.from)) return false;
  if (rule.only && !matchesAny(edge.target, rule.only)) return true;
  if (rule.never && matchesAny(edge.target, rule.never)) return true;
  return Boolean(rule.resolves) && !edge.exists;
}

/** Every (import, rule) pair where the import breaks the rule, in file and line order. */
export function importViolations(graph: ProjectImport[], rules: ImportRule[]): Violation[] {
  return graph.flatMap((edge) =>
    rules
      .filter((rule) => breaks(rule, edge))
      .map((rule) => ({ file: edge.file, line: edge.line, target: edge.target, rule: describeRule(rule), reason: rule.reason })),
  );
}

/**
 * Every pair of files that import each other, a two-file import circle (in any form, types included),
 * as `a ↔ b` with the lesser path first, sorted. Two such files are one module in two pieces: whichever
 * loads first sees the other half-initialised, and neither can be read, tested or moved alone.
 */
export function mutualImports(graph: ProjectImport[]): string[] {
  const edges = new Set(graph.map((e) => `${e.file}\n${e.target}`));
  const pairs = new Set<string>();
  for (const e of graph) if (e.file < e.target && edges.has(`${e.target}\n${e.file}`)) pairs.add(`${e.file} ↔ ${e.target}`);
  return [...pairs].sort();
}

/** A postgres.js tagged template outside the folder allowed to hold SQL: `file`, `line` and its tag. */
export interface SqlTemplate {
  file: string;
  line: number;
  tag: string;
}

/** Whether a template's tag is a postgres.js query function: `sql`, `tx`, or a property so named (`this.sql`). */
function isSqlTag(tag: ts.Expression, names: ReadonlySet<string>): boolean {
  if (ts.isIdentifier(tag)) return names.has(tag.text);
  if (ts.isPropertyAccessExpression(tag)) return names.has(tag.name.text);
  return false;
}

/** Every SQL tagged template (tag named as in `names`) in the `.ts` files under the given folders. */
export function sqlTemplates(root: string, dirs: string[], names: ReadonlySet<string> = new Set(['sql', 'tx'])): SqlTemplate[] {
  return sourceFiles(root, dirs).flatMap((file) => {
    const source = parse(root, file);
    const found: SqlTemplate[] = [];
    walk(source, (node) => {
      if (ts.isTaggedTemplateExpression(node) && isSqlTag(node.tag, names)) {
        found.push({ file, line: lineOf(source, node), tag: node.tag.getText(source) });
      }
    });
    return found;
  });
}

/** One violation as a line of a failure report: `file:line → target: rule (reason)`. */
export function formatViolation(v: Violation): string {
  return `${v.file}:${v.line} → ${v.target}: ${v.rule} (${v.reason})`;
}

/** A request body parsed by hand at one place: the call that does it. */
export interface BodyParse {
  file: string;
  line: number;
  call: string;
}

/** Whether an expression reads a request's body (`req.body`, `request.body`; a reply's body is none). */
function readsBody(node: ts.Node): boolean {
  if (ts.isPropertyAccessExpression(node) && node.name.text === 'body' && ts.isIdentifier(node.expression) && /^req(uest)?$/.test(node.expression.text)) return true;
  return ts.forEachChild(node, (child) => readsBody(child) || undefined) ?? false;
}

/**
 * The calls under `dirs` that parse a request body by hand: the core's body parser (`parseJson`, as
 * the route contract calls it) or `JSON.parse` of a request's `body`.
 */
export function bodyParsing(root: string, dirs: string[]): BodyParse[] {
  return sourceFiles(root, dirs).flatMap((file) => {
    const source = parse(root, file);
    const found: BodyParse[] = [];
    walk(source, (node) => {
      if (!ts.isCallExpression(node)) return;
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.getText(source) : '';
      const byParser = name === 'parseJson' || name.endsWith('.parseJson');
      if (byParser || (name === 'JSON.parse' && node.arguments.some(readsBody))) found.push({ file, line: lineOf(source, node), call: name });
    });
    return found;
  });
}

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateXML } from 'xmllint-wasm';

/**
 * Validation of published DATEX II documents against the official 3.7 schema set
 * (test/fixtures/datex2/v3.7/, root `DATEXII_3_D2Payload.xsd`), by libxml2 compiled to WebAssembly
 * (xmllint-wasm): the same check as `xmllint --schema`, with no program to install.
 */

const SCHEMA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'datex2', 'v3.7');
const ROOT = 'DATEXII_3_D2Payload.xsd';

let files: { fileName: string; contents: string }[] | undefined;
function schemaFiles(): { fileName: string; contents: string }[] {
  files ??= readdirSync(SCHEMA_DIR)
    .filter((name) => name.endsWith('.xsd'))
    .map((fileName) => ({ fileName, contents: readFileSync(join(SCHEMA_DIR, fileName), 'utf8') }));
  return files;
}

/**
 * The schema errors of the documents (empty: all valid), each as libxml2 words it, with its document
 * (`payload-N.xml`, N its place among the arguments) and line. Several documents in one call share
 * one reading of the schema set (about a second).
 */
export async function datex2Errors(...xmls: string[]): Promise<string[]> {
  const all = schemaFiles();
  const result = await validateXML({
    xml: xmls.map((contents, index) => ({ fileName: `payload-${index}.xml`, contents })),
    schema: all.find((f) => f.fileName === ROOT)!,
    preload: all.filter((f) => f.fileName !== ROOT),
    // A thousand stations make a few megabytes; libxml2 needs room for the tree and the schemas.
    initialMemoryPages: 2048,
    maxMemoryPages: 32768,
  });
  return result.valid ? [] : result.errors.map((e) => `${e.loc ? `${e.loc.fileName} line ${e.loc.lineNumber}: ` : ''}${e.message}`);
}

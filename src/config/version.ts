import { readFileSync } from 'node:fs';

/** The platform's version, as package.json gives it (`hrs --version`, `GET /`, metrics). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

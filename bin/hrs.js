#!/usr/bin/env -S node --max-semi-space-size=64
// The `hrs` command. TypeScript sources run directly through tsx's loader: no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
// Everything was closed in order by then; idle keep-alive connections must not keep the process alive.
process.exit(code);

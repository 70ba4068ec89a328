// `--import ./test/bench/lib/built.mjs` (after `--import tsx`): the service's own modules come from
// dist/ (./built-hooks.mjs).
import { register } from 'node:module';

register('./built-hooks.mjs', import.meta.url);

/**
 * The V8 options the service runs with, given on Node's command line by `bin/hrs.js`'s first line and
 * `npm start` (test/system/node-flags.test.ts keeps the three the same; the benchmarks start the platform
 * with them too).
 *
 * `--max-semi-space-size=64`: the young generation may grow to 64 MB per semi-space (Node 20's
 * default is 16). Every request allocates short-lived objects (its copy of the headers, promises,
 * parsed bodies); with more room between scavenges more of them are dead when one runs, so there is
 * less to copy: about 8% less CPU per `GET /v2/hrs/{hrs_id}/status` in `npm run bench -- status`, for
 * up to about 150 MB more resident memory under load.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

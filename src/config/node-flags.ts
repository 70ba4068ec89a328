/**
 * The V8 options the service runs with, given on Node's command line by `bin/hrs.js`'s first line and
 * `npm start` (test/system/node-flags.test.ts keeps the three the same; the benchmarks start the platform
 * with them too).
 *
 * `--max-semi-space-size=32`: the young generation may grow to 32 MB per semi-space (Node 20's
 * default is 16). Every request allocates short-lived objects (its copy of the headers, promises,
 * parsed bodies); with more room between scavenges more of them are dead when one runs, so there is
 * less to copy: 64 MB measured about 8% less CPU per `GET /v2/hrs/{hrs_id}/status` in
 * `npm run bench -- status` than the default. 32 MB measured the same CPU per request as 64 (status and
 * import v2, two runs of each in turn, within the runs' noise), and 64 kept 60–140 MB more resident at
 * the start of a large registry (`npm run bench -- scale`: 100,000 stations, held to a 1 GB peak).
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

// Preloaded by test/node-flags.test.ts: says which options Node was started with.
process.stdout.write(`execArgv: ${process.execArgv.join(' ')}\n`);

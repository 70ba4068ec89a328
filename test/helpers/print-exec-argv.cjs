// Preloaded by test/system/node-flags.test.ts: says which options Node was started with.
process.stdout.write(`execArgv: ${process.execArgv.join(' ')}\n`);

import { versionLine, type Command } from '../command.js';

/** `hrs version`: the platform's version. */
export const version: Command = {
  summary: 'print the version (also `hrs --version`)',
  usage: 'hrs version',
  help: 'Prints the platform\'s version, as package.json gives it: `hrs 0.1.0`.',
  positionals: 0,
  async run(_, io) {
    io.out(versionLine());
    return 0;
  },
};

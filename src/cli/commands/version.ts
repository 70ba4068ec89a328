import { versionLine, type Command } from '../command.js';

/**
 * `hrs version`: the platform's version. Declared as every command is (a Command: summary, usage, help,
 * positionals, run), which is why it looks like `hrs migrate`; the fields are what the dispatcher and
 * `hrs help` read, and each command's values are its own.
 */
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

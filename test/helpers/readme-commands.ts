/**
 * The commands and platform addresses a Markdown page gives, read as a shell would read them, so that
 * tests can check each against what exists: npm scripts, `hrs` commands and options, files, compose
 * services, routes.
 */

export interface Command {
  /** The words after the shell's quoting is undone, leading `NAME=value` assignments included. */
  words: string[];
  /** 1-based line of the page the command starts on. */
  line: number;
  /** From a fenced `sh` block (else an inline code span). */
  fenced: boolean;
}

/** The words a command starts with that make an inline code span a command. */
const COMMAND_WORDS = /^(?:[A-Z_]+=\S+ )*(?:npm|npx|hrs|docker|kill|curl|node) /;

/**
 * Commands of a shell text: quotes (single, double) kept together across lines, `\` + newline a
 * continuation, `#` at a word's start a comment, a newline, `;` or `&&` the end of a command.
 * `$(…)` inside double quotes is kept as text.
 */
export function shellCommands(text: string, firstLine = 1): { words: string[]; line: number }[] {
  const commands: { words: string[]; line: number }[] = [];
  let words: string[] = [];
  let word: string | null = null;
  let line = firstLine;
  let start = firstLine;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length) commands.push({ words, line: start });
    words = [];
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (words.length === 0 && word === null) start = line;
    if (c === '\\' && text[i + 1] === '\n') {
      i += 1;
      line += 1;
      continue;
    }
    if (c === '\\') {
      word = (word ?? '') + (text[i + 1] ?? '');
      i += 1;
      continue;
    }
    if (c === "'") {
      const close = text.indexOf(c, i + 1);
      if (close === -1) throw new Error(`line ${line}: an unclosed '`);
      const quoted = text.slice(i + 1, close);
      line += quoted.split('\n').length - 1;
      word = (word ?? '') + quoted;
      i = close;
      continue;
    }
    if (c === '"') {
      // Inside double quotes a backslash escapes only $ ` " \ and a newline.
      let quoted = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j += 1) {
        if (text[j] === '\\' && text[j + 1] === '\n') {
          j += 1;
          line += 1;
          continue;
        }
        if (text[j] === '\\' && '$`"\\'.includes(text[j + 1] ?? '')) j += 1;
        if (text[j] === '\n') line += 1;
        quoted += text[j];
      }
      if (j >= text.length) throw new Error(`line ${line}: an unclosed "`);
      word = (word ?? '') + quoted;
      i = j;
      continue;
    }
    if (c === '#' && word === null) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i += 1;
      continue;
    }
    if (c === '\n' || c === ';') {
      endCommand();
      if (c === '\n') line += 1;
      continue;
    }
    if (c === '&' && text[i + 1] === '&') {
      endCommand();
      i += 1;
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      continue;
    }
    word = (word ?? '') + c;
  }
  endCommand();
  return commands;
}

/** Every command of a Markdown page: each command of its fenced `sh` blocks, and each inline code span that is a command. */
export function commandsOf(markdown: string): Command[] {
  const lines = markdown.split('\n');
  const commands: Command[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (open) {
      const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
      if (end === -1) throw new Error(`line ${i + 1}: an unclosed fence`);
      if (open[1] === 'sh') {
        for (const c of shellCommands(lines.slice(i + 1, end).join('\n'), i + 2)) commands.push({ ...c, fenced: true });
      }
      i = end;
      continue;
    }
    for (const [, span] of lines[i]!.matchAll(/`([^`]+)`/g)) {
      if (!COMMAND_WORDS.test(`${span!} `)) continue;
      for (const c of shellCommands(span!, i + 1)) commands.push({ ...c, fenced: false });
    }
  }
  return commands;
}

/** Every address of the platform a page names (`http://127.0.0.1:8080/…`, `ws://…`), with its line, in prose, links and code alike. */
export function platformUrlsOf(markdown: string, origins: readonly string[]): { url: URL; line: number }[] {
  const found: { url: URL; line: number }[] = [];
  markdown.split('\n').forEach((text, i) => {
    for (const [match] of text.matchAll(/\b(?:https?|wss?):\/\/[^\s'"<>)`]+/g)) {
      const url = new URL(match.replace(/[.,;:]+$/, ''));
      if (origins.includes(url.host)) found.push({ url, line: i + 1 });
    }
  });
  return found;
}

/**
 * Every path of the platform a page names in inline code (`/admin/`, `POST /portal/v1/webhooks`,
 * `/admin/v1/…`): its method when named, and a pattern of the paths it stands for (`…` any text, the
 * query left out).
 */
export function platformPathsOf(markdown: string): { text: string; method?: string; pattern: RegExp; line: number }[] {
  const found: { text: string; method?: string; pattern: RegExp; line: number }[] = [];
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, ''));
  prose.split('\n').forEach((text, i) => {
    for (const [, span] of text.matchAll(/`([^`]+)`/g)) {
      const m = /^(?:(GET|POST|PUT|PATCH|DELETE) )?((?:\/|…\/)[^\s?]*)(?:\?\S*)?$/.exec(span!);
      if (!m) continue;
      const source = m[2]!.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+');
      found.push({ text: span!, ...(m[1] ? { method: m[1] } : {}), pattern: new RegExp(`^${source}$`), line: i + 1 });
    }
  });
  return found;
}

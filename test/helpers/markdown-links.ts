import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The relative links of Markdown files, checked as GitHub renders them: the file a link names must
 * exist, and its `#anchor` must be the slug of a heading of that file (GitHub's rules: lower case,
 * everything but letters, digits, spaces, `-` and `_` left out, spaces turned to `-`, a repeated slug
 * suffixed `-1`, `-2`, …). External links (a scheme such as `https:` or `mailto:`) are not followed.
 */

export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** Fenced code blocks blanked out (their lines kept, so line numbers stay right). */
function withoutFences(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === null && marker) {
        fence = marker[0]!;
        return '';
      }
      if (fence !== null) {
        if (marker && marker[0] === fence) fence = null;
        return '';
      }
      return line;
    })
    .join('\n');
}

/** GitHub's slug of a heading's text. */
export function slug(heading: string): string {
  const text = heading
    .trim()
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/ /g, '-');
}

/** The headings of a Markdown text (outside code) with their levels and anchors, duplicates suffixed as GitHub does. */
export function headingsOf(text: string): { level: number; text: string; anchor: string }[] {
  const seen = new Map<string, number>();
  const headings: { level: number; text: string; anchor: string }[] = [];
  for (const line of withoutFences(text).split('\n')) {
    const m = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[2]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    headings.push({ level: m[1]!.length, text: m[2]!, anchor: n === 0 ? base : `${base}-${n}` });
  }
  return headings;
}

/** The anchors the headings of a Markdown text give. */
export function anchorsOf(text: string): Set<string> {
  return new Set(headingsOf(text).map((h) => h.anchor));
}

/** Every inline link and image target of a Markdown text (outside code), with its line. */
export function linksOf(text: string): { target: string; line: number }[] {
  // Code spans hold no links; blank them out keeping the text's length, so indexes stay right.
  const prose = withoutFences(text).replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
  const links: { target: string; line: number }[] = [];
  for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const line = prose.slice(0, m.index).split('\n').length;
    links.push({ target: m[1]!, line });
  }
  return links;
}

/** The broken relative links of the given Markdown files; `read` lets a test give files that do not exist. */
export function brokenLinks(files: readonly string[], read: (path: string) => string | null = readIfFile): BrokenLink[] {
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const text = read(file);
    if (text === null) {
      broken.push({ file, line: 0, target: file, reason: 'file not found' });
      continue;
    }
    for (const { target, line } of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      const hash = target.indexOf('#');
      const path = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const into = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const body = path === '' ? text : read(into);
      if (body === null && !(path !== '' && isDirectory(into))) {
        broken.push({ file, line, target, reason: `no file ${path}` });
        continue;
      }
      if (anchor === null || anchor === '') continue;
      if (body === null || !/\.md$/i.test(into)) {
        broken.push({ file, line, target, reason: 'an anchor into something that is no Markdown file' });
        continue;
      }
      if (!anchorsOf(body).has(anchor)) broken.push({ file, line, target, reason: `no heading gives #${anchor}` });
    }
  }
  return broken;
}

function readIfFile(path: string): string | null {
  return existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : null;
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

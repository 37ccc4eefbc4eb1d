import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/main.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') return [];
    return statSync(path).isDirectory() ? files(path, ext) : ext.test(name) ? [path] : [];
  });
}

/** Where users read commands: the docs, and every page, message and help text the code writes. */
const SOURCES = [
  join(ROOT, 'README.md'),
  ...files(join(ROOT, 'docs'), /\.md$/),
  ...['server', 'cli', 'bot', 'action', 'scripts', 'api'].flatMap((d) => files(join(ROOT, d), /\.ts$/)),
];

interface Usage {
  /** The sub-commands this usage line allows (`suspend|resume`), or none. */
  subs: string[];
  /** Flags outside [brackets]: the line needs them. */
  required: string[];
}

/** A command's usage lines, read from its own --help (continuation lines joined). */
function usages(name: string, help: string): Usage[] {
  const head = help.split('\n\n')[0]!;
  const lines: string[] = [];
  for (const line of head.split('\n')) {
    if (/^(Usage:)?\s*slipway /.test(line)) lines.push(line);
    else if (lines.length) lines[lines.length - 1] += ` ${line.trim()}`;
  }
  return lines.map((line) => {
    const rest = line.replace(/^(Usage:)?\s*slipway \S+\s*/, '');
    const first = rest.split(/\s+/)[0] ?? '';
    const subs = /^[a-z][a-z|-]*$/.test(first) ? first.split('|') : [];
    let depth = 0;
    let outside = '';
    for (const ch of rest) {
      if (ch === '[') depth++;
      else if (ch === ']') depth--;
      else if (depth === 0) outside += ch;
    }
    return { subs, required: [...outside.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]) };
  });
}

const decode = (s: string) => s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');

/**
 * Every `slipway ...` a user is told to run, in code: after `npx `, a backtick, `<code>`, `$(`,
 * or at the start of a line of a shell block. Stops at what ends a command in a shell or a text.
 */
function mentions(path: string): { where: string; line: string }[] {
  const text = decode(readFileSync(path, 'utf8'));
  const found: { where: string; line: string }[] = [];
  const re = /(?:npx |`|<code>\s*|\$\(|^\s*(?:[A-Z_]+=\S+\s+)*)slipway ((?:--)?[a-z][^\n`"'|;&)#\\]*)/gm;
  const lines = text.split('\n');
  for (const m of text.matchAll(re)) {
    const lineNo = text.slice(0, m.index).split('\n').length;
    // Code comments are for readers of the code, not users.
    if (path.endsWith('.ts') && /^\s*(\*|\/\/|\/\*\*)/.test(lines[lineNo - 1]!)) continue;
    found.push({ where: `${relative(ROOT, path)}:${lineNo}`, line: m[1]!.replace(/<\/code>.*$/, '').trim() });
  }
  return found;
}

/** What is wrong with one command line, or null. Lines with placeholders are checked as far as they go. */
function problem(line: string): string | null {
  const words = line
    .replace(/<[^>]*>/g, '<x>')
    .replace(/\$\{[^}]*\}/g, '<x>')
    .split(/\s+/)
    .filter(Boolean);
  const [name, ...args] = words;
  if (name === '--help' || name === '--version' || name === 'help') return null;
  const command = COMMANDS.get(name!);
  if (!command) return `"${name}" is not a slipway command (${[...COMMANDS.keys()].join(', ')})`;
  const known = new Set([...command.help.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]));
  for (const f of ['--json', '--help']) known.add(f);
  for (const arg of args) {
    const flag = /^--[a-z][a-z-]*/.exec(arg)?.[0];
    if (flag && !known.has(flag))
      return `slipway ${name} has no ${flag} (its --help: ${[...known].join(' ')})`;
  }
  const forms = usages(name!, command.help);
  const withSubs = forms.filter((u) => u.subs.length > 0);
  let form = forms[0];
  if (withSubs.length > 0) {
    const sub = args[0];
    if (sub === undefined) return null;
    form = withSubs.find((u) => u.subs.includes(sub));
    if (!form) return `slipway ${name} has no "${sub}" (${withSubs.flatMap((u) => u.subs).join(', ')})`;
  }
  // A command named, not spelled out (`run slipway login`), and an example cut short
  // (`--email ...`) are not checked for completeness.
  if (args.length <= (withSubs.length > 0 ? 1 : 0) || words.includes('...') || line.endsWith('--'))
    return null;
  const missing = form?.required.filter((f) => !args.some((a) => a.startsWith(f)));
  if (missing?.length)
    return `slipway ${name}${withSubs.length ? ` ${args[0]}` : ''} needs ${missing.join(', ')}`;
  return null;
}

describe('commands users are told to run', () => {
  const all = SOURCES.flatMap(mentions);

  it('finds the commands of the docs, pages and messages', () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((m) => m.where.startsWith('server/dashboard/pages/'))).toBe(true);
  });

  it('name real commands, sub-commands and flags, with the flags each needs', () => {
    const wrong = all.flatMap((m) => {
      const why = problem(m.line);
      return why ? [`${m.where}: slipway ${m.line}\n    ${why}`] : [];
    });
    expect(wrong, wrong.join('\n')).toEqual([]);
  });

  it('catches the kinds of mistakes that reached users', () => {
    expect(problem('token create you@example.com')).toBe('slipway token create needs --email');
    expect(problem('project create web --repo https://github.com/acme/web.git')).toMatch(
      /^slipway project has no --repo|^slipway project has no "create"/,
    );
    expect(problem('org create <x>')).toBe('slipway org has no "create" (plan)');
    expect(problem('projects create web --repo https://github.com/acme/web.git')).toBeNull();
  });
});

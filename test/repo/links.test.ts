import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** The repository's Markdown files (what GitHub renders). */
const files = execFileSync('git', ['ls-files', '*.md', '**/*.md'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.startsWith('node_modules/') && !f.startsWith('dist/'));

/** Text outside fenced code blocks (links and headings there are examples, not links). */
const prose = (text: string) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1\s*$/gm, '');

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(readFileSync(join(ROOT, file), 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = m[1]!.replace(/`([^`]*)`/g, '$1').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link of a Markdown file, with where it points. */
function linksOf(file: string): { target: string; anchor: string | undefined }[] {
  const text = prose(readFileSync(join(ROOT, file), 'utf8')).replace(/`[^`\n]*`/g, '');
  const out: { target: string; anchor: string | undefined }[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const href = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // http:, https:, mailto:
    const [path, anchor] = href.split('#') as [string, string | undefined];
    out.push({ target: path === '' ? file : join(dirname(file), decodeURIComponent(path)), anchor });
  }
  return out;
}

describe('links in the documentation', () => {
  it('finds the Markdown files', () => {
    expect(files).toContain('README.md');
    expect(files.filter((f) => f.startsWith('docs/')).length).toBeGreaterThan(10);
    const links = files.flatMap(linksOf);
    expect(links.length).toBeGreaterThan(100);
    expect(links.filter((l) => l.anchor).length).toBeGreaterThan(20);
  });

  it('every relative link leads to a file, and every #anchor to a heading there', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const { target, anchor } of linksOf(file)) {
        const full = join(ROOT, target);
        if (!existsSync(full)) {
          broken.push(`${file}: ${target} does not exist`);
          continue;
        }
        if (anchor && target.endsWith('.md') && statSync(full).isFile() && !anchorsOf(target).has(anchor)) {
          broken.push(`${file}: ${target}#${anchor} is no heading of ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('would notice a broken one', () => {
    expect(linksOf('docs/index.md').map((l) => l.target)).toContain('README.md');
    const anchors = anchorsOf('README.md');
    expect(anchors.has('quick-start')).toBe(true);
    expect(anchors.has('no-such-heading')).toBe(false);
  });
});

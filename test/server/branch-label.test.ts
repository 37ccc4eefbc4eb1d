import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  branchHash,
  branchLabelCandidates,
  branchSlug,
  withRandom,
} from '../../server/features/deployments/branch-label.ts';

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The branch URL label rule of docs/edge.md#branch-urls. */
describe('branch URL labels', () => {
  it('lowercases, turns other characters into one hyphen each run, and trims hyphens', () => {
    expect(branchSlug('feature/login')).toBe('feature-login');
    expect(branchSlug('Feature/Login')).toBe('feature-login');
    expect(branchSlug('fix//bug__42..x')).toBe('fix-bug-42-x');
    expect(branchSlug('-/release/v1.2/-')).toBe('release-v1-2');
    expect(branchLabelCandidates('web', 'feature/login')[0]).toBe('web-git-feature-login');
  });

  it('drops accents and turns other scripts into hyphens, with a hash when nothing is left', () => {
    expect(branchSlug('fonctionnalité/été')).toBe('fonctionnalite-ete');
    expect(branchSlug('日本語')).toBe('');
    // Nothing readable left: only the hashed form, which still tells the branches apart.
    const ja = branchLabelCandidates('web', '日本語');
    expect(ja).toEqual([`web-git-${branchHash('日本語')}`]);
    expect(branchLabelCandidates('web', '中文')).not.toEqual(ja);
    expect(branchLabelCandidates('web', 'feature/日本')).toEqual([
      'web-git-feature',
      `web-git-feature-${branchHash('feature/日本')}`,
    ]);
  });

  it('cuts a label longer than 63 characters and appends the hash of the real branch name', () => {
    const long = `feature/${'very-long-branch-name-'.repeat(5)}end`;
    const [label, ...rest] = branchLabelCandidates('my-project', long);
    expect(rest).toEqual([]);
    expect(label).toHaveLength(63);
    expect(label).toMatch(DNS_LABEL);
    expect(label!.endsWith(`-${branchHash(long)}`)).toBe(true);
    expect(label!.startsWith('my-project-git-feature-very-long-branch-name')).toBe(true);
    // Two long names that differ only past the cut get different labels.
    expect(branchLabelCandidates('my-project', `${long}-2`)[0]).not.toBe(label);
    // Exactly 63 is kept as it is.
    const fits = 'a'.repeat(63 - 'p-git-'.length);
    expect(branchLabelCandidates('p', fits)[0]).toBe(`p-git-${fits}`);
    expect(branchLabelCandidates('p', `${fits}b`)).toHaveLength(1);
  });

  it('offers a hashed label for a branch whose plain label another branch has (feature/A, feature-a)', () => {
    const a = branchLabelCandidates('web', 'feature/A');
    const b = branchLabelCandidates('web', 'feature-a');
    expect(a[0]).toBe('web-git-feature-a');
    expect(b[0]).toBe('web-git-feature-a');
    expect(a[1]).toBe(`web-git-feature-a-${branchHash('feature/A')}`);
    expect(b[1]).toBe(`web-git-feature-a-${branchHash('feature-a')}`);
    expect(a[1]).not.toBe(b[1]);
  });

  it('keeps every candidate a DNS label, however long the project name', () => {
    const name = `p${'x'.repeat(61)}z`;
    for (const branch of ['main', 'feature/login', '日本', `x/${'y'.repeat(80)}`, '---']) {
      for (const label of [...branchLabelCandidates(name, branch), withRandom(name, branch, 'abc123')]) {
        expect(label).toMatch(DNS_LABEL);
      }
    }
    expect(withRandom('web', 'main', 'abc123')).toBe(`web-git-main-${branchHash('main')}-abc123`);
  });

  it('gives the labels docs/edge.md shows', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/edge.md'), 'utf8');
    const table = doc.slice(doc.indexOf('| Branch '), doc.indexOf('\n\n', doc.indexOf('| Branch ')));
    const rows = [...table.matchAll(/^\| `([^`]+)`[^|]*\| `([^`]+)`/gm)].map((m) => [m[1], m[2]]);
    expect(rows.length).toBe(6);
    for (const [branch, label] of rows) {
      const candidates = branchLabelCandidates('shop', branch!);
      // feature/A's plain label is taken in the example: it gets the hashed one.
      expect(branch === 'feature/A' ? candidates[1] : candidates[0]).toBe(label);
    }
  });
});

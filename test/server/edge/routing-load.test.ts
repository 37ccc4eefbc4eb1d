import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createArtifactReader } from '../../../server/features/serving/edge/artifact-reader.ts';
import { NO_RULES } from '../../../server/platform/routing/match-rules.ts';
import { storeSite } from '../../helpers/edge.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('routing rules kept with the manifest (artifact reader)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'slipway-artifacts-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('answers NO_RULES at once for an artifact without rules files', async () => {
    const id = await storeSite(root, { 'index.html': '<h1>hi</h1>', 'docs/_redirects': '/a /b' });
    const reader = createArtifactReader(root);
    const manifest = (await reader.manifest(id))!;
    // Only the rules folder counts: a `_redirects` deeper down is a file like any other.
    expect(reader.routingRules(manifest, '')).toBe(NO_RULES);
    const docs = reader.routingRules(manifest, '/docs');
    expect(docs).toBeInstanceOf(Promise);
    expect((await docs).redirectCount).toBe(1);
  });

  it('reads and parses the rules once, then answers without waiting', async () => {
    const id = await storeSite(root, {
      'index.html': 'x',
      _redirects: '/a /b 302\n/c/* /d/:splat',
      _headers: '/*\n  X-A: 1',
    });
    const reader = createArtifactReader(root);
    const manifest = (await reader.manifest(id))!;
    const loading = reader.routingRules(manifest, '');
    expect(loading).toBeInstanceOf(Promise);
    const rules = await loading;
    expect(rules.redirectCount).toBe(2);
    expect(rules.headerCount).toBe(1);
    expect(reader.routingRules(manifest, '')).toBe(rules);
  });

  it("counts the rules in the manifest cache's bound", async () => {
    const big = `/a /b\n${'# a long comment\n'.repeat(500)}`;
    const id = await storeSite(root, { 'index.html': 'x', _redirects: big });
    const reader = createArtifactReader(root, { maxBytes: 4000 });
    const manifest = (await reader.manifest(id))!;
    expect(reader.peek(id)).toBe(manifest);
    await reader.routingRules(manifest, '');
    // The manifest (a few hundred bytes) with its rules (8 KB) is more than the whole bound.
    expect(reader.peek(id)).toBeUndefined();
  });

  it('does not keep a failed read: the next request reads again', async () => {
    const text = '/a /b';
    const id = await storeSite(root, { 'index.html': 'x', _redirects: text });
    const reader = createArtifactReader(root);
    const manifest = (await reader.manifest(id))!;
    const blob = reader.blobPath(sha(text));
    expect(readFileSync(blob, 'utf8')).toBe(text);
    renameSync(blob, `${blob}.away`);
    await expect(reader.routingRules(manifest, '')).rejects.toThrow(/ENOENT/);
    renameSync(`${blob}.away`, blob);
    expect((await reader.routingRules(manifest, '')).redirectCount).toBe(1);
  });
});

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeRoutingRules } from '../../../server/platform/routing/describe-routing-rules.ts';
import { MAX_RULES_FILE_BYTES } from '../../../server/platform/routing/load-rules.ts';

describe('describeRoutingRules (the build log)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'slipway-rules-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('says nothing when the output has neither file', async () => {
    writeFileSync(join(dir, 'index.html'), '<h1>hi</h1>');
    expect(await describeRoutingRules(dir)).toEqual([]);
    expect(await describeRoutingRules(join(dir, 'no-such-dir'))).toEqual([]);
  });

  it('counts the rules, then names each bad line with its number and why', async () => {
    writeFileSync(
      join(dir, '_redirects'),
      [
        '# comment',
        '/old /new',
        '/blog/* /posts/:splat 302',
        '/broken',
        '/a /b 418',
        '/x https://example.com/:splat 200',
        '/* /404.html 404',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, '_headers'),
      '/*\n  X-Frame-Options: DENY\n  Content-Length: 3\n/assets/*\n  ! X-Frame-Options\n',
    );
    expect(await describeRoutingRules(dir)).toEqual([
      'Routing rules: 3 redirects, 2 header rules from _redirects and _headers',
      '_redirects line 4 skipped: "/broken" has no destination: write "from to [status]"',
      expect.stringMatching(/^_redirects line 5 skipped: status "418" is not supported/),
      expect.stringMatching(/^_redirects line 6 skipped: a 200 rule must point to a path on this deployment/),
      '_headers line 3 skipped: Content-Length is set by the edge itself and cannot be changed in _headers',
    ]);
  });

  it('speaks of one file alone, in the singular', async () => {
    writeFileSync(join(dir, '_headers'), '/*\n  X-Frame-Options: DENY\n');
    expect(await describeRoutingRules(dir)).toEqual([
      'Routing rules: 0 redirects, 1 header rule from _headers',
    ]);
    writeFileSync(join(dir, '_redirects'), '/a /b\n');
    rmSync(join(dir, '_headers'));
    expect(await describeRoutingRules(dir)).toEqual([
      'Routing rules: 1 redirect, 0 header rules from _redirects',
    ]);
  });

  it('lists 50 bad lines and counts the rest', async () => {
    writeFileSync(join(dir, '_redirects'), Array.from({ length: 80 }, (_, i) => `/only${i}`).join('\n'));
    const lines = await describeRoutingRules(dir);
    expect(lines).toHaveLength(1 + 50 + 1);
    expect(lines[0]).toBe('Routing rules: 0 redirects, 0 header rules from _redirects');
    expect(lines[50]).toBe(
      '_redirects line 50 skipped: "/only49" has no destination: write "from to [status]"',
    );
    expect(lines[51]).toBe('_redirects: 30 more bad lines skipped, not listed here');
  });

  it('says why a file is not read: a link, not a file, too large', async () => {
    writeFileSync(join(dir, 'elsewhere'), '/a /b\n');
    symlinkSync(join(dir, 'elsewhere'), join(dir, '_redirects'));
    mkdirSync(join(dir, '_headers'));
    expect(await describeRoutingRules(dir)).toEqual([
      'Routing rules: 0 redirects, 0 header rules',
      '_redirects is a symbolic link, which is not published: its rules do not apply',
      '_headers is not a file: ignored',
    ]);
    rmSync(join(dir, '_redirects'));
    writeFileSync(join(dir, '_redirects'), `/a /b\n${'#'.repeat(MAX_RULES_FILE_BYTES)}`);
    expect(await describeRoutingRules(dir)).toContain('_redirects is larger than 1 MiB, the limit: ignored');
  });

  it("reads the folder that holds a runtime's rules", async () => {
    writeFileSync(join(dir, '_redirects'), '/a /b\n');
    expect(await describeRoutingRules(dir, { runtime: { kind: 'node' } })).toEqual([
      'Routing rules: 1 redirect, 0 header rules from _redirects',
    ]);
  });
});

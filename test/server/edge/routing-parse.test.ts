import { describe, expect, it } from 'vitest';
import { HEADER_LIMITS, parseHeaders } from '../../../server/platform/routing/parse-headers.ts';
import { parseRedirects, REDIRECT_LIMITS } from '../../../server/platform/routing/parse-redirects.ts';
import { MAX_WARNINGS } from '../../../server/platform/routing/rule-warning.ts';

/** The one warning of a single bad line, which must be skipped. */
function badRedirect(line: string) {
  const { rules, warnings } = parseRedirects(`# first line\n${line}\n`);
  expect(rules).toEqual([]);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]!.line).toBe(2);
  return warnings[0]!.message;
}

describe('parseRedirects', () => {
  it('reads each part of the syntax, skipping comments and blank lines', () => {
    const text = [
      '# Moved pages',
      '',
      '/old /new',
      '/blog/* /posts/:splat 302',
      '/users/:id/profile /u/:id 307  # a comment after the rule',
      '/app/* /app/index.html 200',
      '/* /404.html 404',
      '/forced /elsewhere 301!',
      '/out https://example.com/landing?ref=site#top 308',
      '   /indented\t/tabs   303',
      '/shop /store 200!',
    ].join('\r\n');
    const { rules, warnings } = parseRedirects(text);
    expect(warnings).toEqual([]);
    expect(rules).toEqual([
      { line: 3, from: '/old', to: '/new', status: 301, force: false },
      { line: 4, from: '/blog/*', to: '/posts/:splat', status: 302, force: false },
      { line: 5, from: '/users/:id/profile', to: '/u/:id', status: 307, force: false },
      { line: 6, from: '/app/*', to: '/app/index.html', status: 200, force: false },
      { line: 7, from: '/*', to: '/404.html', status: 404, force: false },
      { line: 8, from: '/forced', to: '/elsewhere', status: 301, force: true },
      { line: 9, from: '/out', to: 'https://example.com/landing?ref=site#top', status: 308, force: false },
      { line: 10, from: '/indented', to: '/tabs', status: 303, force: false },
      { line: 11, from: '/shop', to: '/store', status: 200, force: true },
    ]);
  });

  it('reads a file with a byte-order mark', () => {
    expect(parseRedirects('\uFEFF/a /b 302\n').rules).toEqual([
      { line: 1, from: '/a', to: '/b', status: 302, force: false },
    ]);
  });

  it('names each kind of bad line with its number and reason, and keeps the good ones', () => {
    expect(badRedirect('/lonely')).toContain('has no destination');
    expect(badRedirect('/a /b 418')).toContain('status "418" is not supported');
    expect(badRedirect('/a /b 301?')).toContain('status "301?" is not supported');
    expect(badRedirect('/a /b 301 extra')).toContain('unexpected "extra"');
    expect(badRedirect('/ /anz 302 Country=au,nz')).toContain('conditions');
    expect(badRedirect('/store id=:id /blog/:id 301')).toContain('conditions');
    expect(badRedirect('old /new')).toContain('must start with /');
    expect(badRedirect('https://old.example.com/* /new/:splat')).toContain('names a host');
    expect(badRedirect('/search?q=x /find')).toContain('query string');
    expect(badRedirect('/a/*/b/* /c')).toContain('2 splats');
    expect(badRedirect('/:a/:a /c')).toContain('placeholder :a twice');
    expect(badRedirect('/:splat /c')).toContain(':splat');
    expect(badRedirect('/:year-:month /c')).toContain('more than one placeholder or splat in the segment');
  });

  it('accepts one splat or one placeholder in a segment', () => {
    const { rules, warnings } = parseRedirects('/files/*.pdf /docs/:splat.pdf\n/posts/:slug.html /p/:slug');
    expect(warnings).toEqual([]);
    expect(rules).toHaveLength(2);
  });

  it('refuses destinations it cannot serve or that name unknown placeholders', () => {
    expect(badRedirect('/a b')).toContain('must be a path starting with /');
    expect(badRedirect('/a //evil.example.com/x')).toContain('starts with //');
    expect(badRedirect('/a javascript:alert(1)')).toContain('not a path or an http(s):// URL');
    expect(badRedirect('/a mailto:x@example.com 302')).toContain('not a path or an http(s):// URL');
    expect(badRedirect('/a https:// 302')).toContain('not a valid URL');
    expect(badRedirect('/a /b/:splat')).toBe('the destination uses :splat but the source has no *');
    expect(badRedirect('/a/:id /b/:slug')).toBe(
      'the destination uses :slug, which the source does not define',
    );
    // Rewrites stay on this deployment: the edge is no proxy.
    expect(badRedirect('/api/* https://api.example.com/:splat 200')).toContain('does not proxy');
    expect(badRedirect('/x https://example.com/404.html 404')).toContain('does not proxy');
    // A port or credentials in an absolute URL are no placeholders.
    expect(parseRedirects('/a https://user:pw@example.com:8443/x 302').warnings).toEqual([]);
  });

  it('skips a rule that can never apply, and keeps a forced one after an unforced one', () => {
    const { rules, warnings } = parseRedirects('/a /b\n/a/ /c\n/a /d 301!\n/a /e 302!\n');
    expect(rules.map((r) => r.line)).toEqual([1, 3]);
    expect(warnings).toEqual([
      { line: 2, message: 'never applies: line 1 has the same source and comes first' },
      { line: 4, message: 'never applies: line 3 has the same source and comes first' },
    ]);
  });

  it('skips lines longer than 1,000 characters', () => {
    const long = `/a /${'x'.repeat(REDIRECT_LIMITS.lineLength)}`;
    const { rules, warnings } = parseRedirects(`/ok /fine\n${long}\n`);
    expect(rules).toHaveLength(1);
    expect(warnings).toEqual([{ line: 2, message: 'longer than 1,000 characters (the limit)' }]);
    expect(parseRedirects(`/a /${'x'.repeat(REDIRECT_LIMITS.lineLength - 4)}`).warnings).toEqual([]);
  });

  it('keeps 2,000 rules without * or placeholders and 100 with, and skips the rest by line', () => {
    const statics = Array.from({ length: REDIRECT_LIMITS.staticRules + 2 }, (_, i) => `/s${i} /t${i}`);
    const dynamics = Array.from({ length: REDIRECT_LIMITS.dynamicRules + 1 }, (_, i) => `/d${i}/* /t/:splat`);
    const { rules, warnings } = parseRedirects([...dynamics, ...statics].join('\n'));
    expect(rules).toHaveLength(REDIRECT_LIMITS.staticRules + REDIRECT_LIMITS.dynamicRules);
    expect(warnings).toEqual([
      { line: 101, message: 'more than 100 rules with * or placeholders (the limit)' },
      { line: 101 + 2001, message: 'more than 2,000 rules without * or placeholders (the limit)' },
      { line: 101 + 2002, message: 'more than 2,000 rules without * or placeholders (the limit)' },
    ]);
  });

  it('lists at most 1,000 bad lines, then says how many more there were', () => {
    const text = Array.from({ length: MAX_WARNINGS + 5 }, () => '/x').join('\n');
    const { warnings } = parseRedirects(text);
    expect(warnings).toHaveLength(MAX_WARNINGS + 1);
    expect(warnings.at(-1)).toEqual({
      line: MAX_WARNINGS + 1,
      message:
        '"/x" has no destination: write "from to [status]"; so are 4 more bad lines after it, not listed',
    });
  });
});

describe('parseHeaders', () => {
  it('reads blocks of headers under path patterns, with detaches and comments', () => {
    const text = [
      '# Security for every page',
      '/*',
      '  X-Frame-Options: DENY',
      '  Content-Security-Policy: default-src https: ; img-src *',
      '',
      '/assets/*',
      '  Cache-Control: public, max-age=31536000, immutable',
      '  ! X-Frame-Options',
      '/users/:id',
      '  Link: </api/users/:id>; rel="preload"',
      '  X-Multi: one',
      '  x-multi: two',
      '  Set-Cookie: a=1',
      '  Set-Cookie: b=2',
      'X-Unindented: works as Cloudflare reads it',
    ].join('\n');
    const { rules, warnings } = parseHeaders(text);
    expect(warnings).toEqual([]);
    expect(rules).toEqual([
      {
        line: 2,
        path: '/*',
        set: [
          ['X-Frame-Options', 'DENY'],
          ['Content-Security-Policy', 'default-src https: ; img-src *'],
        ],
        detach: [],
      },
      {
        line: 6,
        path: '/assets/*',
        set: [['Cache-Control', 'public, max-age=31536000, immutable']],
        detach: ['x-frame-options'],
      },
      {
        line: 9,
        path: '/users/:id',
        set: [
          ['Link', '</api/users/:id>; rel="preload"'],
          ['X-Multi', 'one, two'],
          ['Set-Cookie', 'a=1'],
          ['Set-Cookie', 'b=2'],
          ['X-Unindented', 'works as Cloudflare reads it'],
        ],
        detach: [],
      },
    ]);
  });

  it('names each kind of bad line with its number and reason', () => {
    const text = [
      'X-Early: before any path', // 1
      '/ok', // 2
      '  not a header', // 3
      '  Bad Name: x', // 4
      '  Content-Length: 5', // 5
      '  X-Slipway-Deployment: dpl_forged', // 6
      '  X-Empty:', // 7
      '  X-Emoji: \u{1F600}', // 8
      '  ! Transfer-Encoding', // 9
      '  X-Good: yes', // 10
      '/empty', // 11
      'https://example.com/*', // 12
      '  X-Skipped: with its block', // 13
      '/a/*/b/*', // 14
      '  X-Skipped: too', // 15
      '/last', // 16
      '  X-Last: kept', // 17
    ].join('\n');
    const { rules, warnings } = parseHeaders(text);
    expect(rules.map((r) => [r.line, r.set])).toEqual([
      [2, [['X-Good', 'yes']]],
      [16, [['X-Last', 'kept']]],
    ]);
    expect(warnings.map((w) => w.line)).toEqual([1, 3, 4, 5, 6, 7, 8, 9, 11, 12, 14]);
    const says = Object.fromEntries(warnings.map((w) => [w.line, w.message]));
    expect(says[1]).toContain('comes before any path');
    expect(says[3]).toContain('is not "Name: value" or "! Name"');
    expect(says[4]).toContain('"Bad Name" is not a valid header name');
    expect(says[5]).toBe('Content-Length is set by the edge itself and cannot be changed in _headers');
    expect(says[6]).toContain('set by the edge itself');
    expect(says[7]).toBe('X-Empty has no value (to remove a header, write "! X-Empty")');
    expect(says[8]).toContain('printable ASCII');
    expect(says[9]).toContain('Transfer-Encoding is set by the edge itself');
    expect(says[11]).toBe('no headers under "/empty"');
    expect(says[12]).toContain('names a host');
    expect(says[12]).toContain('the headers under it are skipped too');
    expect(says[14]).toContain('2 splats');
  });

  it('skips lines longer than 2,000 characters, a pattern with its block', () => {
    const long = `/${'x'.repeat(HEADER_LIMITS.lineLength)}`;
    const { rules, warnings } = parseHeaders(
      `${long}\n  X-A: 1\n/ok\n  X-B: ${'y'.repeat(HEADER_LIMITS.lineLength)}\n  X-C: 3`,
    );
    expect(rules).toEqual([{ line: 3, path: '/ok', set: [['X-C', '3']], detach: [] }]);
    expect(warnings).toEqual([
      { line: 1, message: 'longer than 2,000 characters (the limit); the headers under it are skipped too' },
      { line: 4, message: 'longer than 2,000 characters (the limit)' },
    ]);
  });

  it('keeps 100 header rules and skips the rest', () => {
    const text = Array.from({ length: HEADER_LIMITS.rules + 2 }, (_, i) => `/p${i}\n  X-N: ${i}`).join('\n');
    const { rules, warnings } = parseHeaders(text);
    expect(rules).toHaveLength(100);
    expect(warnings).toEqual([
      { line: 201, message: 'more than 100 header rules (the limit); the headers under it are skipped too' },
      { line: 203, message: 'more than 100 header rules (the limit); the headers under it are skipped too' },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { applyHeaderRules, withHeaderRules } from '../../../server/platform/routing/apply-headers.ts';
import { compileRules, NO_RULES, type RoutingRules } from '../../../server/platform/routing/match-rules.ts';
import { parseHeaders } from '../../../server/platform/routing/parse-headers.ts';
import { parseRedirects } from '../../../server/platform/routing/parse-redirects.ts';

function rules(redirects: string, headers = ''): RoutingRules {
  const r = parseRedirects(redirects);
  const h = parseHeaders(headers);
  expect([...r.warnings, ...h.warnings]).toEqual([]);
  return compileRules(r.rules, h.rules);
}

const none = () => false;
/** Where a request goes: the Location of a redirect, the target of a rewrite, or null. */
function where(r: RoutingRules, url: string, exists: (path: string) => boolean = none) {
  const path = decodeURIComponent(url.split('?')[0]!);
  const answer = r.redirect(path, url, exists);
  if (!answer) return null;
  return answer.kind === 'redirect'
    ? `${answer.status} ${answer.location}`
    : `${answer.status} rewrite ${answer.path} (${answer.url})`;
}

describe('matching _redirects', () => {
  it('matches a fixed path with or without its trailing slash', () => {
    const r = rules('/about /about-us\n/docs/ /documentation 302');
    expect(where(r, '/about')).toBe('301 /about-us');
    expect(where(r, '/about/')).toBe('301 /about-us');
    expect(where(r, '/docs')).toBe('302 /documentation');
    expect(where(r, '/docs/')).toBe('302 /documentation');
    expect(where(r, '/about/team')).toBeNull();
    expect(where(r, '/About')).toBeNull();
  });

  it('matches a splat, also the folder itself, and passes it on', () => {
    const r = rules('/blog/* /posts/:splat 302\n/files/*.pdf /docs/:splat.pdf');
    expect(where(r, '/blog/2024/hello')).toBe('302 /posts/2024/hello');
    expect(where(r, '/blog/')).toBe('302 /posts/');
    expect(where(r, '/blog')).toBe('302 /posts/');
    expect(where(r, '/blogger')).toBeNull();
    expect(where(r, '/files/a/b.pdf')).toBe('301 /docs/a/b.pdf');
    expect(where(r, '/files/a.txt')).toBeNull();
  });

  it('matches a placeholder as one whole segment', () => {
    const r = rules('/users/:id /u/:id 302\n/news/:year/:month /archive/:month-:year.html');
    expect(where(r, '/users/42')).toBe('302 /u/42');
    expect(where(r, '/users/42/')).toBe('302 /u/42');
    expect(where(r, '/users/42/posts')).toBeNull();
    expect(where(r, '/users/')).toBeNull();
    expect(where(r, '/news/2024/05')).toBe('301 /archive/05-2024.html');
  });

  it('applies the topmost matching rule, fixed or not', () => {
    const r = rules('/a/* /first/:splat\n/a/b /second\n/c /third\n/* /fourth');
    expect(where(r, '/a/b')).toBe('301 /first/b');
    expect(where(r, '/c')).toBe('301 /third');
    expect(where(r, '/d')).toBe('301 /fourth');
  });

  it('gives way to a file at the path unless the rule is forced with !', () => {
    const r = rules('/page /moved\n/kept /moved 301!\n/shadow /x 302\n/shadow /y 302!\n/* /index.html 200');
    const asked: string[] = [];
    const exists = (path: string) => {
      asked.push(path);
      return ['/page', '/kept', '/shadow', '/index.html'].includes(path);
    };
    // A file at the path: unforced rules give way, the file is served.
    expect(where(r, '/page', exists)).toBeNull();
    expect(where(r, '/index.html', exists)).toBeNull();
    // Forced: applies over the file, which is not even looked for.
    asked.length = 0;
    expect(where(r, '/kept', exists)).toBe('301 /moved');
    expect(asked).toEqual([]);
    // The unforced rule gives way, the forced one below it applies.
    expect(where(r, '/shadow', exists)).toBe('302 /y');
    expect(where(r, '/shadow', none)).toBe('302 /x');
    // No file: the catch-all rewrite applies.
    expect(where(r, '/app/route', exists)).toBe('200 rewrite /index.html (/index.html)');
  });

  it('passes over a redirect to the very address asked for, so one spelling can be made canonical', () => {
    const r = rules('/docs /docs/ 301!\n/about/ /about 301!\n/search /search?lang=en 302\n/same /same 302');
    expect(where(r, '/docs')).toBe('301 /docs/');
    expect(where(r, '/docs/')).toBeNull();
    expect(where(r, '/about/')).toBe('301 /about');
    expect(where(r, '/about')).toBeNull();
    expect(where(r, '/search')).toBe('302 /search?lang=en');
    expect(where(r, '/search?lang=en')).toBeNull();
    expect(where(r, '/same?x=1')).toBeNull();
  });

  it('passes the query on to a redirect unless the destination has its own', () => {
    const r = rules(
      '/old /new\n/tagged /new?from=tagged\n/anchor /new#top\n/out https://example.com/x 302\n/s/* /t/:splat 302',
    );
    expect(where(r, '/old?a=1&b=2')).toBe('301 /new?a=1&b=2');
    expect(where(r, '/old?')).toBe('301 /new');
    expect(where(r, '/tagged?a=1')).toBe('301 /new?from=tagged');
    expect(where(r, '/anchor?a=1')).toBe('301 /new?a=1#top');
    expect(where(r, '/out?q=x')).toBe('302 https://example.com/x?q=x');
    expect(where(r, '/s/deep/path?q=1#frag')).toBe('302 /t/deep/path?q=1');
  });

  it('percent-encodes what a path gives a destination, so nothing raw reaches a header', () => {
    const r = rules('/s/* /t/:splat 302\n/p/:name https://example.com/:name 302');
    expect(where(r, '/s/a%20b/%3F%23%25')).toBe('302 /t/a%20b/%3F%23%25');
    expect(where(r, '/s/caf%C3%A9')).toBe('302 /t/caf%C3%A9');
    expect(where(r, '/s/x%0d%0aSet-Cookie:%20a=b')).toBe('302 /t/x%0D%0ASet-Cookie:%20a=b');
    expect(where(r, '/p/%E2%9C%93')).toBe('302 https://example.com/%E2%9C%93');
    // Written in the file as text, a destination is sent as ASCII too.
    expect(where(rules('/a /caf\u00e9 302'), '/a')).toBe('302 /caf%C3%A9');
  });

  it('rewrites to a decoded file path, and to a URL for a server app', () => {
    const r = rules(
      '/app/* /app/index.html 200\n/en/* /en/404.html 404\n/s/:q /search?q=:q 200\n/x/* /caf%C3%A9/:splat 200',
    );
    expect(where(r, '/app/deep/route?tab=2')).toBe('200 rewrite /app/index.html (/app/index.html?tab=2)');
    expect(where(r, '/en/missing')).toBe('404 rewrite /en/404.html (/en/404.html)');
    expect(where(r, '/s/term?ignored=1')).toBe('200 rewrite /search (/search?q=term)');
    expect(where(r, '/x/a%20b')).toBe('200 rewrite /café/a b (/caf%C3%A9/a%20b)');
  });

  it('finds rules among the most a file may hold: 2,000 fixed paths and 100 patterns', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `/old/${i} /new/${i}`);
    lines.push(...Array.from({ length: 100 }, (_, i) => `/section${i}/:id/* /s${i}/:id/:splat`));
    const r = rules(lines.join('\n'));
    expect(where(r, '/old/1999')).toBe('301 /new/1999');
    expect(where(r, '/section99/7/a/b')).toBe('301 /s99/7/a/b');
    expect(where(r, '/section9/7')).toBe('301 /s9/7/');
    expect(where(r, '/elsewhere/entirely')).toBeNull();
  });

  it('matches a long crafted path without backtracking for ever', () => {
    // With `.+` for placeholders instead of one segment's `[^/]+`, this takes minutes, not a few ms.
    const r = rules('/:a/*/:b/x /y\n/*/z/:c.html /w');
    const path = `/a${'/b'.repeat(8000)}`;
    const started = performance.now();
    expect(r.redirect(path, path, none)).toBeNull();
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('is NO_RULES itself when there are no rules', () => {
    expect(compileRules([], [])).toBe(NO_RULES);
    expect(NO_RULES.redirect('/a', '/a', none)).toBeNull();
    expect(NO_RULES.headers('/a')).toBeNull();
  });
});

describe('matching and applying _headers', () => {
  const HEADERS = [
    '/*',
    '  X-Frame-Options: DENY',
    '  X-Robots-Tag: noindex',
    '/assets/*',
    '  Cache-Control: public, max-age=31536000, immutable',
    '  ! X-Frame-Options',
    '  X-Robots-Tag: nosnippet',
    '/users/:id',
    '  Link: </api/users/:id.json>; rel=preload',
    '  Set-Cookie: seen=1',
  ].join('\n');
  const r = rules('', HEADERS);
  const EDGE = [
    'X-Slipway-Deployment',
    'dpl_1',
    'Content-Type',
    'text/css',
    'Cache-Control',
    'public, max-age=0, must-revalidate',
  ];

  it('finds every matching block, in file order, and none for other paths', () => {
    expect(r.headers('/assets/app.css')).toHaveLength(2);
    expect(r.headers('/about')).toHaveLength(1);
    expect(rules('', '/docs/*\n  X-A: 1').headers('/blog')).toBeNull();
    // A block without placeholders is the same object on every request.
    expect(r.headers('/a')![0]).toBe(r.headers('/b')![0]);
  });

  it("replaces the edge's own headers, joins values of several blocks and detaches", () => {
    expect(withHeaderRules(EDGE, r.headers('/assets/app.css')!)).toEqual([
      'X-Slipway-Deployment',
      'dpl_1',
      'Content-Type',
      'text/css',
      'X-Robots-Tag',
      'noindex, nosnippet',
      'Cache-Control',
      'public, max-age=31536000, immutable',
    ]);
    // The edge's list itself is never changed: it is kept for the next request.
    expect(EDGE).toHaveLength(6);
  });

  it('fills placeholders in values, encoded, and adds cookies as fields of their own', () => {
    const fields = withHeaderRules(EDGE, r.headers('/users/a%20b')!);
    expect(fields.slice(6)).toEqual([
      'X-Frame-Options',
      'DENY',
      'X-Robots-Tag',
      'noindex',
      'Link',
      '</api/users/a%2520b.json>; rel=preload',
      'Set-Cookie',
      'seen=1',
    ]);
  });

  it('a later block sets again what an earlier one detached', () => {
    const later = rules('', '/*\n  ! Cache-Control\n/*\n  Cache-Control: no-cache');
    expect(withHeaderRules(EDGE, later.headers('/x')!)).toEqual([
      ...EDGE.slice(0, 4),
      'Cache-Control',
      'no-cache',
    ]);
  });

  it("applies the same way to a server app's answer", () => {
    const headers: Record<string, string | string[]> = {
      'content-type': 'text/html',
      'x-frame-options': 'SAMEORIGIN',
      'set-cookie': ['session=abc'],
    };
    applyHeaderRules(headers, r.headers('/users/7')!);
    expect(headers).toEqual({
      'content-type': 'text/html',
      'x-frame-options': 'DENY',
      'x-robots-tag': 'noindex',
      link: '</api/users/7.json>; rel=preload',
      'set-cookie': ['session=abc', 'seen=1'],
    });
    const assets: Record<string, string> = { 'x-frame-options': 'SAMEORIGIN', 'cache-control': 'no-store' };
    applyHeaderRules(assets, r.headers('/assets/a.js')!);
    expect(assets).toEqual({
      'x-robots-tag': 'noindex, nosnippet',
      'cache-control': 'public, max-age=31536000, immutable',
    });
  });
});

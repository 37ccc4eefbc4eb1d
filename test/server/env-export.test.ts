import { parse as parseDotenv } from 'dotenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { formatDotenv, quoteDotenvValue } from '../../server/features/deployments/env/format-dotenv.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { addMember } from '../helpers/members.ts';

/** Values that break naive `.env` writers; dotenv must read each back exactly. */
const NASTY: Record<string, string> = {
  PLAIN: 'hello',
  EMPTY: '',
  SINGLE_QUOTE: "it's",
  DOUBLE_QUOTE: 'say "hi"',
  BACKTICK: 'run `ls`',
  TWO_QUOTE_KINDS: `it's "quoted"`,
  ALL_QUOTE_KINDS: `it's "all" \`three\``,
  HASH: 'abc#def',
  HASH_SPACED: 'abc # not a comment',
  EQUALS: 'a=b=c',
  LEADING_SPACE: '  leading',
  TRAILING_SPACE: 'trailing  ',
  TAB: '\tindented\t',
  NEWLINES: 'line1\nline2\n',
  NEWLINES_AND_QUOTES: `first "line"\nsecond 'line'`,
  CR: 'carriage\rreturn\r\n',
  UNICODE: 'héllo wörld ✓ 😀 日本',
  UNICODE_SPACES: '\u00a0nbsp\u2028sep\u2029',
  TEMPLATE: '${VAR}',
  TEMPLATE_WITH_DEFAULT: 'pre-${HOME:-/root}-post',
  DOLLAR: '$HOME',
  BACKSLASHES: 'C:\\Users\\me',
  BACKSLASH_N_TEXT: 'not a newline: \\n',
  BACKSLASH_N_AND_QUOTES: `it's \\n "x"`,
  BACKSLASH_END_BARE: 'dir\\',
  JSON_TEXT: '{"a":[1,2],"b":"c"}',
  LOOKS_LIKE_YAML: '- item: true',
  YAML_BOOL: 'yes',
  NUMBER: '007',
  COLON: 'host: port',
  EXPORT_WORD: 'export FOO=bar',
  QUOTED_ALREADY: '"already quoted"',
  SINGLE_QUOTED_ALREADY: "'single'",
  BACKSLASH_END_SPACED: 'C:\\My Documents\\',
  PEM: '-----BEGIN KEY-----\nMIIB+abc/def==\n-----END KEY-----\n',
  LONG: 'x'.repeat(5000) + ' ' + 'y'.repeat(5000),
};

describe('environment export', () => {
  let t: TestApp;
  let alice: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  let pid: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
    const project = await t.call(alice, 'POST', '/v1/projects', {
      name: 'export',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    pid = project.body.data.id;
    const keys = Object.keys(NASTY);
    const imported = await t.call(alice, 'POST', `/v1/projects/${pid}/env/import`, {
      // Half of them secrets: export shows secrets' plaintext all the same.
      variables: keys.map((key, i) => ({ key, value: NASTY[key], encrypted: i % 2 === 0 })),
    });
    expect(imported.body.data).toEqual({ created: keys.length, updated: 0, skipped: 0 });
    await t.call(alice, 'POST', `/v1/projects/${pid}/env`, {
      key: 'PREVIEW_ONLY',
      value: 'p',
      environment: 'preview',
    });
  });
  afterAll(() => t.close());

  const exportUrl = (q = '') => `/v1/projects/${pid}/env/export${q}`;

  it('writes a .env file that dotenv reads back exactly (default format)', async () => {
    const res = await t.call(alice, 'GET', exportUrl());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(parseDotenv(res.text)).toEqual(NASTY);
    const lines = res.text.split('\n');
    expect(lines).toContain('PLAIN=hello');
    expect(lines).toContain("EMPTY=''");
    expect(lines).toContain(`SINGLE_QUOTE=\`it's\``);
    expect(lines).toContain("TEMPLATE='${VAR}'");
    expect(lines).toContain('NEWLINES="line1\\nline2\\n"');
    expect(lines).toContain('CR="carriage\\rreturn\\r\\n"');
    // One variable a line wherever double quotes can carry the line breaks.
    expect(lines.filter((l) => l.startsWith('PEM='))).toEqual([
      'PEM="-----BEGIN KEY-----\\nMIIB+abc/def==\\n-----END KEY-----\\n"',
    ]);
    expect(res.text.endsWith('\n')).toBe(true);
  });

  it('answers json in the envelope and yaml as application/yaml, both exact', async () => {
    const json = await t.call(alice, 'GET', exportUrl('?format=json'));
    expect(json.status).toBe(200);
    expect(json.body).toEqual({ success: true, data: NASTY });
    const yaml = await t.call(alice, 'GET', exportUrl('?format=yaml&environment=production'));
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(parseYaml(yaml.text)).toEqual(NASTY);
  });

  it('exports the chosen environment only', async () => {
    const env = await t.call(alice, 'GET', exportUrl('?environment=preview'));
    expect(env.text).toBe('PREVIEW_ONLY=p\n');
    const yaml = await t.call(alice, 'GET', exportUrl('?environment=development&format=yaml'));
    expect(parseYaml(yaml.text)).toEqual({});
    const text = await t.call(alice, 'GET', exportUrl('?environment=development'));
    expect(text.text).toBe('');
    const json = await t.call(alice, 'GET', exportUrl('?environment=development&format=json'));
    expect(json.body.data).toEqual({});
  });

  it('refuses the env format for a value dotenv cannot read back, pointing at json and yaml', async () => {
    const project = await t.call(alice, 'POST', '/v1/projects', {
      name: 'unwritable',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    const other = project.body.data.id as string;
    const values = {
      OK: 'fine',
      SPACED_BACKSLASH: ' C:\\dir\\',
      CR_AND_QUOTE: 'a"\rb',
      QUOTES: `'"\``,
      LINES_AND_QUOTES: `a'b"c\`\nd`,
    };
    await t.call(alice, 'POST', `/v1/projects/${other}/env/import`, {
      variables: Object.entries(values).map(([key, value]) => ({ key, value })),
    });
    const res = await t.call(alice, 'GET', `/v1/projects/${other}/env/export?format=env`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toContain('(CR_AND_QUOTE, LINES_AND_QUOTES, QUOTES, SPACED_BACKSLASH)');
    expect(res.body.error.message).toContain('format=json or format=yaml');
    const needsQuotes = 'it needs quotes (whitespace at an end, #, a line break or a leading quote)';
    expect(res.body.error.details).toEqual([
      {
        path: 'format',
        message:
          'CR_AND_QUOTE cannot be written as a .env line: it holds a carriage return together with a double quote or a literal \\n or \\r',
      },
      {
        path: 'format',
        message: `LINES_AND_QUOTES cannot be written as a .env line: it holds ' and \` together with " or a literal \\n or \\r, and ${needsQuotes}`,
      },
      {
        path: 'format',
        message: `QUOTES cannot be written as a .env line: it holds ' and \` together with " or a literal \\n or \\r, and ${needsQuotes}`,
      },
      {
        path: 'format',
        message: `SPACED_BACKSLASH cannot be written as a .env line: it ends with a backslash, which only an unquoted value can, but ${needsQuotes}`,
      },
    ]);
    const yaml = await t.call(alice, 'GET', `/v1/projects/${other}/env/export?format=yaml`);
    expect(parseYaml(yaml.text)).toEqual(values);
  });

  it('rejects bad query values, naming them', async () => {
    const res = await t.call(alice, 'GET', exportUrl('?format=xml&environment=staging&x=1'));
    expect(res.status).toBe(400);
    const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(['environment', 'format', 'x']);
  });

  it('is for developers and up (403 for a viewer), NOT_FOUND outside the organization, 401 without a token', async () => {
    const asViewer = await t.call(viewer, 'GET', exportUrl('?format=yaml'));
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.error.code).toBe('FORBIDDEN');
    expect(asViewer.text).not.toContain('hello');
    const outsider = await t.call(mallory, 'GET', exportUrl());
    expect(outsider.status).toBe(404);
    const anonymous = await t.call(null, 'GET', exportUrl());
    expect(anonymous.status).toBe(401);
  });
});

describe('formatDotenv', () => {
  it('round-trips random values through dotenv.parse, or says why it cannot', () => {
    const alphabet = ['a', 'Z', '0', ' ', '\t', '\n', '\r', "'", '"', '`', '#', '=', '\\', 'n', 'r', '$'];
    const more = ['{', '}', 'é', '\u2028', '\u00a0', '😀', ':', 'export '];
    const chars = [...alphabet, ...more];
    // A fixed-seed generator: the same cases on every run.
    let seed = 20261122;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let refused = 0;
    for (let round = 0; round < 3000; round++) {
      const vars = Array.from({ length: 1 + Math.floor(next() * 5) }, (_, i) => ({
        key: `K${i}`,
        value: Array.from(
          { length: Math.floor(next() * 9) },
          () => chars[Math.floor(next() * chars.length)],
        ).join(''),
      }));
      const writable = vars.filter((v) => quoteDotenvValue(v.value).ok);
      refused += vars.length - writable.length;
      const out = formatDotenv(writable);
      if (!out.ok) throw new Error('writable values were refused');
      expect(parseDotenv(out.text), JSON.stringify(out.text)).toEqual(
        Object.fromEntries(writable.map((v) => [v.key, v.value])),
      );
    }
    // Refusals are the rare corner (trailing backslash, CR with ", all quote kinds with \n text).
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThan(3000);
  });

  it('refuses only what dotenv truly cannot carry', () => {
    expect(quoteDotenvValue('ends\\')).toEqual({ ok: true, text: 'ends\\' });
    expect(quoteDotenvValue('ends with space\\')).toEqual({ ok: true, text: 'ends with space\\' });
    expect(quoteDotenvValue(' starts with space\\').ok).toBe(false);
    expect(quoteDotenvValue('cr\rbut fine')).toEqual({ ok: true, text: '"cr\\rbut fine"' });
    expect(quoteDotenvValue(`it's "all" \`three\``)).toEqual({ ok: true, text: `it's "all" \`three\`` });
    expect(quoteDotenvValue(`'"\``).ok).toBe(false);
  });
});

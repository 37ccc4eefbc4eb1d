import { describe, expect, it } from 'vitest';
import { parseConfig, type SlipwayConfig } from '../../bot/config.ts';
import { PullRequest } from '../../bot/github/payloads.ts';
import { globMatcher, matchesAny } from '../../bot/lib/glob.ts';
import { createKeyedLock } from '../../bot/lib/keyed-lock.ts';
import { parseCommand } from '../../bot/lib/parse-command.ts';
import { createSeenIds } from '../../bot/lib/seen-ids.ts';
import { formatTag, parseTag } from '../../bot/lib/tag.ts';
import { decidePreview } from '../../bot/preview/decide.ts';
import { botConfigured, loadBotSettings } from '../../bot/settings.ts';
import { pullRequest } from './helpers/payloads.ts';
import { testPrivateKey } from './helpers/harness.ts';

const SHA = 'a'.repeat(40);

describe('.github/slipway.yml', () => {
  it('fills in the defaults', () => {
    expect(parseConfig('project: site\n')).toEqual({
      kind: 'ok',
      config: {
        project: 'site',
        previews: { enabled: true, drafts: false, forks: 'approve', paths: [], skipLabels: [] },
        promoteOnMerge: true,
        comment: 'always',
      },
    });
  });

  it('reads every setting', () => {
    const text = [
      'project: prj_0123456789abcdefgh',
      'organization: acme',
      'previews:',
      '  enabled: false',
      '  drafts: true',
      '  forks: always',
      "  paths: ['web/**', '!web/docs/**']",
      '  skipLabels: [wip]',
      'promoteOnMerge: false',
      'comment: failures',
    ].join('\n');
    expect(parseConfig(text)).toMatchObject({
      kind: 'ok',
      config: {
        organization: 'acme',
        previews: {
          enabled: false,
          drafts: true,
          forks: 'always',
          paths: ['web/**', '!web/docs/**'],
          skipLabels: ['wip'],
        },
        promoteOnMerge: false,
        comment: 'failures',
      },
    });
  });

  it('names what is wrong', () => {
    expect(parseConfig('')).toEqual({
      kind: 'invalid',
      message:
        '.github/slipway.yml is not valid:\n- `project`: Invalid input: expected string, received undefined',
    });
    expect(parseConfig('project: site\npromoteOnMege: false\ncomment: sometimes\n')).toMatchInlineSnapshot(`
      {
        "kind": "invalid",
        "message": ".github/slipway.yml is not valid:
      - \`comment\`: Invalid option: expected one of "always"|"failures"|"off"
      - Unrecognized key: "promoteOnMege"",
      }
    `);
    expect(parseConfig('project: [unclosed\n').kind).toBe('invalid');
    expect((parseConfig('project: [unclosed\n') as { message: string }).message).toMatch(
      /^\.github\/slipway\.yml is not valid YAML: /,
    );
    expect(parseConfig('- a list\n')).toMatchObject({ kind: 'invalid' });
  });
});

describe('globs of previews.paths', () => {
  it.each([
    ['src/**', 'src/a/b.ts', true],
    ['src/**', 'srcx/a.ts', false],
    ['*.md', 'docs/deep/README.md', true],
    ['/package.json', 'package.json', true],
    ['/package.json', 'web/package.json', false],
    ['web/*.{ts,tsx}', 'web/app.tsx', true],
    ['web/*.{ts,tsx}', 'web/sub/app.tsx', false],
    ['web/', 'web/x/y', true],
    ['**/test/**', 'a/test/b.ts', true],
    ['file?.txt', 'file1.txt', true],
    // The syntax users copy from GitHub's `paths:` filters.
    ['{src/**,docs/*}', 'src/deep/a.ts', true],
    ['{src/**,docs/*}', 'docs/intro.md', true],
    ['{src/**,docs/*}', 'docs/deep/intro.md', false],
    ['{src/**,docs/*}', 'lib/a.ts', false],
    ['file[0-9].ts', 'file7.ts', true],
    ['file[0-9].ts', 'pkg/file3.ts', true],
    ['file[0-9].ts', 'filex.ts', false],
    ['src/**/*.{js,ts}', 'src/a/b/c.ts', true],
    ['.github/workflows/*', '.github/workflows/ci.yml', true],
    ['*.md', '.changeset/notes.md', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(globMatcher(pattern)(path)).toBe(expected);
  });

  it('applies exclusions in order', () => {
    expect(matchesAny('web/docs/a.md', ['web/**', '!web/docs/**'])).toBe(false);
    expect(matchesAny('web/app.ts', ['web/**', '!web/docs/**'])).toBe(true);
    expect(matchesAny('README.md', ['!*.md'])).toBe(false);
    expect(matchesAny('src/a.ts', ['!*.md'])).toBe(true);
  });
});

describe('commands', () => {
  it.each([
    ['/preview', 'preview'],
    ['  /promote please', 'promote'],
    ['/rollback\nbecause it broke', 'rollback'],
    ['/slipway help', 'help'],
    ['/SLIPWAY   HELP', 'help'],
    ['/previewing', null],
    ['please /promote', null],
    ['LGTM\n/promote', null],
  ])('%j is %s', (body, command) => {
    expect(parseCommand(body)).toBe(command);
  });
});

describe('deployment tags', () => {
  it('round-trip through the deployment message', () => {
    const tag = { kind: 'merge' as const, owner: 'octo-org', repo: 'web.site', pull: 7, sha: SHA };
    expect(formatTag(tag)).toBe(`Merge of octo-org/web.site#7 (${SHA})`);
    expect(parseTag(formatTag(tag))).toEqual(tag);
    expect(parseTag('deployed by hand')).toBeNull();
    expect(parseTag(null)).toBeNull();
  });
});

describe('the preview decision', () => {
  const config = (previews: Partial<SlipwayConfig['previews']> = {}): SlipwayConfig => ({
    project: 'site',
    previews: { enabled: true, drafts: false, forks: 'approve', paths: [], skipLabels: [], ...previews },
    promoteOnMerge: true,
    comment: 'always',
  });
  const pr = (over: Parameters<typeof pullRequest>[0] extends infer S ? Partial<S> : never = {}) =>
    PullRequest.parse(pullRequest({ number: 1, headSha: SHA, headRef: 'f', ...over }));
  const lookups = (files: string[] = ['src/a.ts'], message = 'Change') => {
    const asked: string[] = [];
    return {
      asked,
      changedFiles: async () => (asked.push('files'), files),
      headCommitMessage: async () => (asked.push('message'), message),
    };
  };

  it('asks GitHub nothing when a cheap rule already skips', async () => {
    const l = lookups();
    expect(await decidePreview(config({ paths: ['src/**'] }), pr({ draft: true }), l)).toMatchObject({
      kind: 'skip',
    });
    expect(l.asked).toEqual([]);
  });

  it('builds drafts with drafts: true, and asks for approval of forks', async () => {
    expect(await decidePreview(config({ drafts: true }), pr({ draft: true }), lookups())).toEqual({
      kind: 'build',
    });
    expect(await decidePreview(config(), pr({ fork: true }), lookups())).toEqual({ kind: 'approve' });
    expect(await decidePreview(config({ forks: 'always' }), pr({ fork: true }), lookups())).toEqual({
      kind: 'build',
    });
  });

  it('reads the changed files only when paths are set', async () => {
    const l = lookups();
    await decidePreview(config(), pr(), l);
    expect(l.asked).toEqual(['message']);
    const m = lookups(['docs/a.md']);
    expect(await decidePreview(config({ paths: ['src/**'] }), pr(), m)).toMatchObject({ kind: 'skip' });
    expect(m.asked).toEqual(['files']);
  });
});

describe('support', () => {
  it('forgets delivery ids once they can no longer pass the timestamp check', () => {
    let now = 0;
    const seen = createSeenIds(() => now, 1000);
    expect(seen.checkAndAdd('a')).toBe(false);
    expect(seen.checkAndAdd('a')).toBe(true);
    now = 1500;
    expect(seen.checkAndAdd('a')).toBe(false);
  });

  it('runs the work of one key in order, even when a task fails', async () => {
    const lock = createKeyedLock();
    const order: string[] = [];
    const slow = lock.run('k', async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push('first');
      throw new Error('boom');
    });
    const next = lock.run('k', async () => order.push('second'));
    const other = lock.run('other', async () => order.push('other'));
    await expect(slow).rejects.toThrow('boom');
    await Promise.all([next, other]);
    expect(order).toEqual(['other', 'first', 'second']);
  });

  it('reads the settings from the environment and says what is missing', () => {
    const env = {
      APP_ID: '123',
      PRIVATE_KEY: testPrivateKey().replace(/\n/g, '\\n'),
      WEBHOOK_SECRET: 'gh',
      SLIPWAY_API_TOKEN: 'slw_x',
      SLIPWAY_WEBHOOK_SECRET: '0123456789abcdef',
    };
    expect(botConfigured(env)).toBe(true);
    expect(botConfigured({ ...env, WEBHOOK_SECRET: '' })).toBe(false);
    const settings = loadBotSettings(env, { apiUrl: 'http://localhost:3000' });
    expect(settings).toMatchObject({
      appId: '123',
      apiUrl: 'http://localhost:3000',
      botUrl: 'http://localhost:3002',
      port: 3002,
      host: '0.0.0.0',
      githubApiUrl: undefined,
    });
    expect(settings.privateKey).toBe(testPrivateKey());
    expect(
      loadBotSettings({ ...env, PRIVATE_KEY: Buffer.from(testPrivateKey()).toString('base64') }).privateKey,
    ).toBe(testPrivateKey());
    expect(() =>
      loadBotSettings({ ...env, SLIPWAY_WEBHOOK_SECRET: 'short', BOT_PORT: 'x', SLIPWAY_API_TOKEN: '' }),
    ).toThrow(
      /SLIPWAY_API_TOKEN[\s\S]*SLIPWAY_WEBHOOK_SECRET must be at least 16 characters[\s\S]*BOT_PORT must be a whole number/,
    );
    expect(() => loadBotSettings({ ...env, PRIVATE_KEY: 'not a key' })).toThrow(
      /PRIVATE_KEY must be the GitHub App private key/,
    );
  });
});

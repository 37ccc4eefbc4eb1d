import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildError } from '../../../server/platform/sandbox/build-error.ts';
import { checkout } from '../../../server/features/builds/checkout.ts';
import { createGitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import { testSandbox } from '../../helpers/sandbox.ts';

describe('checkout', () => {
  let source: GitRepo;
  let first: string;
  let second: string;
  let featureHead: string;
  let pullHead: string;
  const roots: string[] = [];

  beforeAll(() => {
    source = createGitRepo();
    first = source.commit({ 'index.html': 'v1' }, 'First version');
    second = source.commit({ 'index.html': 'v2' }, 'Second version\n\nWith a body line.');
    source.git('checkout', '-q', '-b', 'feature');
    featureHead = source.commit({ 'index.html': 'feature' }, 'Feature work');
    source.git('checkout', '-q', 'main');
    // What GitHub does for pull requests: a ref outside refs/heads.
    source.git('checkout', '-q', '--detach', 'main');
    pullHead = source.commit({ 'index.html': 'pull request' }, 'PR head');
    source.git('update-ref', 'refs/pull/1/head', pullHead);
    source.git('checkout', '-q', 'main');
  });
  afterAll(() => {
    source.remove();
    roots.forEach((r) => rmSync(r, { recursive: true, force: true }));
  });

  const run = async (opts: { ref: string; commit?: string; url?: string }) => {
    const root = mkdtempSync(join(tmpdir(), 'slipway-checkout-'));
    // The sandbox's user passes through it to the workspace (as through a data directory).
    chmodSync(root, 0o711);
    roots.push(root);
    const workspace = join(root, 'src');
    const lines: string[] = [];
    const result = await checkout({
      repositoryUrl: opts.url ?? source.url,
      ref: opts.ref,
      commit: opts.commit,
      workspace,
      sandbox: await testSandbox(),
      log: (l) => lines.push(l),
      timeoutMs: 20_000,
    });
    return { result, lines, file: readFileSync(join(workspace, 'index.html'), 'utf8'), workspace };
  };

  it('checks out the head of a branch with its author and message', async () => {
    const { result, lines, file } = await run({ ref: 'main' });
    expect(result).toEqual({
      commitHash: second,
      author: 'author@example.com',
      commitMessage: 'Second version\n\nWith a body line.',
    });
    expect(file).toBe('v2');
    expect(lines[0]).toBe(`Cloning ${source.url} (branch: main)`);
    expect(lines.at(-1)).toBe(`Checked out ${second.slice(0, 7)}: Second version`);
  });

  it('checks out another branch', async () => {
    const { result, file } = await run({ ref: 'feature' });
    expect(result.commitHash).toBe(featureHead);
    expect(file).toBe('feature');
  });

  it('takes a plain local path as the repository', async () => {
    const { result } = await run({ ref: 'main', url: source.dir });
    expect(result.commitHash).toBe(second);
  });

  it('checks out a pinned full commit that is not the head', async () => {
    const { result, file } = await run({ ref: 'main', commit: first });
    expect(result.commitHash).toBe(first);
    expect(file).toBe('v1');
  });

  it('checks out a pinned short commit', async () => {
    const { result, file } = await run({ ref: 'main', commit: first.slice(0, 7) });
    expect(result.commitHash).toBe(first);
    expect(file).toBe('v1');
  });

  it('checks out refs/pull/1/head', async () => {
    const { result, file, lines } = await run({ ref: 'refs/pull/1/head' });
    expect(result.commitHash).toBe(pullHead);
    expect(result.commitMessage).toBe('PR head');
    expect(file).toBe('pull request');
    expect(lines[0]).toContain('(ref: refs/pull/1/head)');
  });

  it('fetches only the one commit (shallow)', async () => {
    const { workspace } = await run({ ref: 'main' });
    expect(existsSync(join(workspace, '.git', 'shallow'))).toBe(true);
  });

  it('says when the branch does not exist', async () => {
    await expect(run({ ref: 'nope' })).rejects.toThrow(
      new BuildError(`Branch "nope" was not found in ${source.url}.`),
    );
  });

  it('says when the pinned commit does not exist (short and full)', async () => {
    await expect(run({ ref: 'main', commit: 'abcdef1' })).rejects.toThrow(
      `Commit abcdef1 was not found on branch "main" of ${source.url}.`,
    );
    await expect(run({ ref: 'main', commit: 'a'.repeat(40) })).rejects.toThrow(/Commit a{40} was not found/);
  });

  it('says when the pinned commit is on another branch only', async () => {
    await expect(run({ ref: 'main', commit: featureHead.slice(0, 10) })).rejects.toThrow(
      /was not found on branch "main"/,
    );
  });

  it('says when the repository cannot be read', async () => {
    const missing = `file://${join(tmpdir(), 'slipway-no-such-repo')}`;
    await expect(run({ ref: 'main', url: missing })).rejects.toThrow(
      /^Could not read the repository file:\/\/.*slipway-no-such-repo: .*does not appear to be a git repository/,
    );
  });

  it('refuses a repository URL that would be read as an option', async () => {
    await expect(run({ ref: 'main', url: '--upload-pack=touch /tmp/x' })).rejects.toThrow(
      /must not start with "-"/,
    );
  });

  it('refuses the ext:: transport, which runs commands', async () => {
    await expect(run({ ref: 'main', url: 'ext::sh -c touch% /tmp/slipway-pwned' })).rejects.toThrow(
      BuildError,
    );
    expect(existsSync('/tmp/slipway-pwned')).toBe(false);
  });

  it('fails fast on an http server that asks for credentials', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      await expect(
        run({ ref: 'main', url: `http://user:s3cret-token@127.0.0.1:${port}/repo.git` }),
      ).rejects.toThrow(/^Could not read the repository http:\/\/\*\*\*@127\.0\.0\.1/);
    } finally {
      server.close();
    }
  });
});

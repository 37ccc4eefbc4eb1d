import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseAction, ReleaseRefused, type ReleaseOptions } from '../../scripts/release-action.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';

/** The Action's release steps against a real repository and a real (bare, local) remote. */
describe('npm run release', () => {
  let repo: GitRepo;
  let remote: string;
  const lines: string[] = [];

  beforeAll(() => {
    // Annotated tags need a tagger, whatever this machine's git configuration says.
    process.env.GIT_COMMITTER_NAME ??= 'Release Test';
    process.env.GIT_COMMITTER_EMAIL ??= 'release@example.com';
    repo = createGitRepo({
      files: { 'action.yml': 'name: Slipway\n', 'dist/action/index.js': 'bundle 1\n' },
    });
    remote = mkdtempSync(join(tmpdir(), 'slipway-remote-'));
    execFileSync('git', ['init', '-q', '--bare', remote]);
    repo.git('remote', 'add', 'origin', remote);
    repo.git('push', '-q', 'origin', 'main');
  });
  afterAll(() => {
    repo.remove();
    rmSync(remote, { recursive: true, force: true });
  });

  const release = (version: string, extra: Partial<ReleaseOptions> = {}) =>
    releaseAction({
      version,
      push: true,
      remote: 'origin',
      cwd: repo.dir,
      bundle: () => undefined,
      log: (l) => lines.push(l),
      ...extra,
    });
  const remoteTag = (tag: string) =>
    execFileSync('git', ['rev-parse', `${tag}^{commit}`], { cwd: remote, encoding: 'utf8' }).trim();

  it('tags the commit vX.Y.Z, moves vX to it, and pushes both', () => {
    const first = release('1.0.0');
    expect(first).toMatchObject({ tag: 'v1.0.0', major: 'v1', commit: repo.git('rev-parse', 'HEAD') });
    expect(remoteTag('v1.0.0')).toBe(first.commit);
    expect(remoteTag('v1')).toBe(first.commit);

    repo.commit({ 'dist/action/index.js': 'bundle 2\n' }, 'A new feature');
    repo.git('push', '-q', 'origin', 'main');
    const second = release('v1.1.0');
    expect(remoteTag('v1')).toBe(second.commit);
    expect(remoteTag('v1.1.0')).toBe(second.commit);
    // What someone pinned stays where it was.
    expect(remoteTag('v1.0.0')).toBe(first.commit);
  });

  it('refuses a stale bundle, a dirty tree, another branch, a used or malformed version, and tags nothing', () => {
    const tagsBefore = repo.git('tag', '--list');
    const refused = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        expect(err).toBeInstanceOf(ReleaseRefused);
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(
      refused(() =>
        release('1.2.0', {
          bundle: () => writeFileSync(join(repo.dir, 'dist/action/index.js'), 'rebuilt differently\n'),
        }),
      ),
    ).toMatch(
      /^dist\/action is not the bundle of the current sources \(1 files differ\): run `npm run bundle`/,
    );
    repo.git('checkout', '-q', '--', 'dist/action');
    writeFileSync(join(repo.dir, 'notes.txt'), 'uncommitted');
    expect(refused(() => release('1.2.0'))).toBe('The working tree has changes: commit or stash them first');
    rmSync(join(repo.dir, 'notes.txt'));
    repo.git('checkout', '-q', '-b', 'feature');
    expect(refused(() => release('1.2.0'))).toBe('Release from main: this is feature');
    repo.git('checkout', '-q', 'main');
    expect(refused(() => release('1.1.0'))).toBe('Tag v1.1.0 exists already: choose the next version');
    expect(refused(() => release('1.2'))).toBe('The version must be X.Y.Z (for example 1.4.0), got "1.2"');
    expect(repo.git('tag', '--list')).toBe(tagsBefore);
  });
});

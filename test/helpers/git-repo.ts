import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/fixtures/apps/<name>. */
export const fixtureApp = (name: string): string =>
  join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'apps', name);

export interface GitRepo {
  /** The repository's working tree (a local path git can fetch from). */
  dir: string;
  /** `file://` URL of the repository. */
  url: string;
  /** Runs git in the repository and returns its trimmed stdout. */
  git(...args: string[]): string;
  /** Writes files (path -> content) and commits them; returns the new commit's hash. */
  commit(files: Record<string, string>, message: string): string;
  remove(): void;
}

// The user's own git config (signing, hooks, default branch) must not change what tests see.
const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
};

/**
 * A real git repository in a temporary directory on branch `main`, optionally seeded with a
 * copy of a fixture app as its first commit.
 */
export function createGitRepo(opts: { fromFixture?: string; files?: Record<string, string> } = {}): GitRepo {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-repo-'));
  // Builds clone it as the sandbox's user, who must be able to read it.
  chmodSync(dir, 0o755);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Test Author', '-c', 'user.email=author@example.com', ...args], {
      cwd: dir,
      env: GIT_ENV,
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');

  const repo: GitRepo = {
    dir,
    url: `file://${dir}`,
    git,
    commit(files, message) {
      for (const [path, content] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  if (opts.fromFixture) cpSync(fixtureApp(opts.fromFixture), dir, { recursive: true });
  if (opts.fromFixture || opts.files) repo.commit(opts.files ?? {}, 'Initial commit');
  return repo;
}

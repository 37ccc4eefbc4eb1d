import { execFileSync } from 'node:child_process';

/**
 * Publishes the GitHub Action: tags the current commit of main `vX.Y.Z` and moves the major tag
 * `vX` to it, so `uses: <owner>/slipway@v1` follows the newest 1.x and `@v1.2.3` (or the commit)
 * stays put. Refuses unless the tree is clean, on main, the version new, and the committed bundle
 * (dist/action) exactly what `npm run bundle` makes of the sources. docs/action.md#publishing.
 */
export interface ReleaseOptions {
  version: string;
  /** Push both tags to `remote`. */
  push: boolean;
  remote: string;
  cwd: string;
  /** Rebuilds dist/action (`npm run bundle`). */
  bundle: () => void;
  log: (line: string) => void;
}

export class ReleaseRefused extends Error {}

export function releaseAction(o: ReleaseOptions): { tag: string; major: string; commit: string } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: o.cwd, encoding: 'utf8' }).trim();
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(o.version);
  if (!m) throw new ReleaseRefused(`The version must be X.Y.Z (for example 1.4.0), got "${o.version}"`);
  const tag = `v${m[1]}.${m[2]}.${m[3]}`;
  const major = `v${m[1]}`;
  const branch = git('rev-parse', '--abbrev-ref', 'HEAD');
  if (branch !== 'main') throw new ReleaseRefused(`Release from main: this is ${branch}`);
  if (git('status', '--porcelain') !== '') {
    throw new ReleaseRefused('The working tree has changes: commit or stash them first');
  }
  if (git('tag', '--list', tag) !== '')
    throw new ReleaseRefused(`Tag ${tag} exists already: choose the next version`);
  o.log('Rebuilding the bundle to check it is the committed one...');
  o.bundle();
  const drift = git('status', '--porcelain', '--', 'dist/action');
  if (drift !== '') {
    throw new ReleaseRefused(
      `dist/action is not the bundle of the current sources (${drift.split('\n').length} files differ): run \`npm run bundle\`, commit dist/action, and release again`,
    );
  }
  const commit = git('rev-parse', 'HEAD');
  git('tag', '-a', tag, '-m', `Slipway Action ${tag}`);
  git('tag', '-f', '-a', major, '-m', `Slipway Action ${tag}`, `${tag}^{}`);
  o.log(`Tagged ${commit.slice(0, 12)} as ${tag} and moved ${major} to it.`);
  if (o.push) {
    git('push', '--quiet', o.remote, `refs/tags/${tag}`);
    git('push', '--quiet', '--force', o.remote, `refs/tags/${major}`);
    o.log(`Pushed ${tag} and ${major} to ${o.remote}.`);
  } else {
    o.log(`Push them with: git push ${o.remote} ${tag} && git push --force ${o.remote} ${major}`);
  }
  return { tag, major, commit };
}

// `npm run release -- 1.4.0 [--push] [--remote origin]`
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const remoteAt = args.indexOf('--remote');
  try {
    releaseAction({
      version: args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--remote') ?? '',
      push: args.includes('--push'),
      remote: remoteAt === -1 ? 'origin' : (args[remoteAt + 1] ?? 'origin'),
      cwd: process.cwd(),
      bundle: () => execFileSync('npm', ['run', '--silent', 'bundle'], { stdio: 'inherit' }),
      log: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (err) {
    if (!(err instanceof ReleaseRefused)) throw err;
    process.stderr.write(`release: ${err.message}\n`);
    process.exitCode = 1;
  }
}

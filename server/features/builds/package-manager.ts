import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { PackageJson } from './package-json.ts';

export type PackageManagerName = 'npm' | 'yarn' | 'pnpm' | 'bun';

export interface PackageManager {
  name: PackageManagerName;
  /** The lockfile the choice came from, or null. */
  lockfile: string | null;
  /** argv that installs the dependencies, or null when there is nothing to install. */
  install: string[] | null;
  /**
   * argv that installs, whatever package.json lists (a workspace root often lists nothing of its
   * own): frozen to the lockfile when there is one.
   */
  installAll: string[];
  /** argv that runs a package.json script. */
  runScript(script: string): string[];
}

/** Lockfiles in the order they are looked for: the first present decides. */
const LOCKFILES: { file: string; name: PackageManagerName }[] = [
  { file: 'package-lock.json', name: 'npm' },
  { file: 'npm-shrinkwrap.json', name: 'npm' },
  { file: 'yarn.lock', name: 'yarn' },
  { file: 'pnpm-lock.yaml', name: 'pnpm' },
  { file: 'bun.lockb', name: 'bun' },
  { file: 'bun.lock', name: 'bun' },
];

const FROZEN_INSTALL: Record<PackageManagerName | 'yarn-berry', string[]> = {
  npm: ['npm', 'ci'],
  yarn: ['yarn', 'install', '--frozen-lockfile'],
  // Yarn 2 and later renamed it (and warn that --frozen-lockfile is deprecated).
  'yarn-berry': ['yarn', 'install', '--immutable'],
  pnpm: ['pnpm', 'install', '--frozen-lockfile'],
  bun: ['bun', 'install', '--frozen-lockfile'],
};

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Chooses the package manager from the lockfile (as Vercel and Netlify do). Without a
 * lockfile, package.json's `packageManager` field decides, else npm; the install then cannot
 * be frozen. A package with no dependencies at all installs nothing.
 */
export async function detectPackageManager(dir: string, pkg: PackageJson | null): Promise<PackageManager> {
  let found: (typeof LOCKFILES)[number] | undefined;
  for (const candidate of LOCKFILES) {
    if (await exists(join(dir, candidate.file))) {
      found = candidate;
      break;
    }
  }
  const declared = /^(npm|yarn|pnpm|bun)@/.exec(pkg?.packageManager ?? '')?.[1] as
    PackageManagerName | undefined;
  const name = found?.name ?? declared ?? 'npm';
  const dependencyCount =
    Object.keys(pkg?.dependencies ?? {}).length + Object.keys(pkg?.devDependencies ?? {}).length;

  const berry =
    name === 'yarn' &&
    (/^yarn@[2-9]/.test(pkg?.packageManager ?? '') || (await exists(join(dir, '.yarnrc.yml'))));
  const installAll = found ? FROZEN_INSTALL[berry ? 'yarn-berry' : name] : [name, 'install'];

  return {
    name,
    lockfile: found?.file ?? null,
    install: !pkg || dependencyCount === 0 ? null : installAll,
    installAll,
    runScript: (script) => [name, 'run', script],
  };
}

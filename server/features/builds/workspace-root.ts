import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { parse as parseYaml } from 'yaml';
import type { PackageJson } from './package-json.ts';

/**
 * The workspace patterns of the repository root: `pnpm-workspace.yaml`'s `packages`, else
 * package.json's `workspaces` (npm, yarn, bun). Null when the root declares no workspaces.
 */
export async function workspacePatterns(
  repoDir: string,
  rootPkg: PackageJson | null,
): Promise<string[] | null> {
  const pnpm = await readFile(join(repoDir, 'pnpm-workspace.yaml'), 'utf8').catch(() => null);
  if (pnpm !== null) {
    let doc: unknown;
    try {
      doc = parseYaml(pnpm);
    } catch {
      doc = null;
    }
    const packages = (doc as { packages?: unknown } | null)?.packages;
    if (Array.isArray(packages)) return packages.filter((p): p is string => typeof p === 'string');
  }
  return rootPkg?.workspaces ?? null;
}

/**
 * Whether the app in `appPath` (relative, e.g. `apps/web`) is one of the root's workspaces:
 * then dependencies are installed once at the root, as the package manager expects.
 */
export function isWorkspaceMember(patterns: readonly string[], appPath: string): boolean {
  const include = patterns
    .filter((p) => !p.startsWith('!'))
    .map((p) => p.replace(/^\.\//, '').replace(/\/$/, ''));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1).replace(/^\.\//, ''));
  return picomatch(include)(appPath) && !(exclude.length > 0 && picomatch(exclude)(appPath));
}

import type { BuildSettings } from '../../../platform/store/build-spec.ts';
import type { DetectedFramework } from '../detect-framework.ts';
import { readPackageJson } from '../package-json.ts';
import { detectPackageManager } from '../package-manager.ts';
import { isWorkspaceMember, workspacePatterns } from '../workspace-root.ts';

/** How dependencies get installed: a command, where, and the lockfile it follows; or why not. */
export type InstallPlan = { argv: string[]; cwd: string; lockfile: string | null } | { skip: string };

/**
 * The project's install command (in the app's folder); else, for a monorepo's app that the
 * root's workspaces include, the root's package manager at the root; else the app's own.
 */
export async function installPlan(
  fw: DetectedFramework,
  settings: BuildSettings,
  at: { src: string; app: string; appPath: string },
  needed: boolean,
): Promise<InstallPlan> {
  if (settings.installCommand === '')
    return { skip: "Skipping install: the project's install command is empty" };
  if (settings.installCommand !== null) {
    return { argv: ['sh', '-c', settings.installCommand], cwd: at.app, lockfile: fw.packageManager.lockfile };
  }
  if (!needed) {
    return {
      skip: fw.packageManager.install
        ? 'Skipping install: nothing to build'
        : 'Skipping install: no dependencies in package.json',
    };
  }
  if (at.app !== at.src) {
    const rootPkg = await readPackageJson(at.src);
    const patterns = await workspacePatterns(at.src, rootPkg);
    if (patterns && isWorkspaceMember(patterns, at.appPath)) {
      const pm = await detectPackageManager(at.src, rootPkg);
      // A workspace root often has no dependencies of its own: its workspaces have them.
      return { argv: pm.installAll, cwd: at.src, lockfile: pm.lockfile };
    }
  }
  const install = fw.packageManager.install;
  if (!install) return { skip: 'Skipping install: no dependencies in package.json' };
  return { argv: install, cwd: at.app, lockfile: fw.packageManager.lockfile };
}

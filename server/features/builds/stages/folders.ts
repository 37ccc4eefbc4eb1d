import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { BuildError } from '../../../platform/sandbox/build-error.ts';
import type { DetectedFramework } from '../detect-framework.ts';

/**
 * A folder the project's settings name (`rootDirectory`, `outputDirectory`): it must exist
 * and be a real directory inside `within` (default `base`), links resolved, so a setting or a
 * link in the repository cannot point elsewhere on the build machine.
 */
export async function folderInside(base: string, path: string, what: string, within = base): Promise<string> {
  const full = resolve(base, path);
  const rel = relative(within, full);
  if (rel.startsWith('..') || isAbsolute(rel))
    throw new BuildError(`The ${what} "${path}" is outside the repository.`);
  const stats = await lstat(full).catch(() => null);
  if (!stats) {
    throw new BuildError(
      what === 'output directory'
        ? `The build did not create the output directory "${path}" (the project's outputDirectory). Check the build log, or change the setting.`
        : `The ${what} "${path}" does not exist in the repository. Check the project's rootDirectory.`,
    );
  }
  const realRel = relative(await realpath(within), await realpath(full));
  if (!stats.isDirectory() || realRel.startsWith('..') || isAbsolute(realRel)) {
    throw new BuildError(`The ${what} "${path}" must be a directory inside the repository.`);
  }
  return full;
}

/**
 * A folder a framework's build made (`.next/standalone`, `.next/static`, `public`) that Slipway
 * stores: null when the build did not make it; else it must be a real directory inside `src`,
 * with no link on its way out (a build could point it at the build machine's own files, which
 * the service, not the sandbox, reads when it stores them).
 */
export async function builtFolder(src: string, dir: string, what: string): Promise<string | null> {
  const shown = relative(src, dir) || '.';
  const stats = await lstat(dir).catch(() => null);
  if (!stats) return null;
  const realRel = relative(await realpath(src), await realpath(dir).catch(() => '/'));
  if (!stats.isDirectory() || realRel.startsWith('..') || isAbsolute(realRel)) {
    throw new BuildError(`The ${what}'s folder "${shown}" must be a directory inside the repository.`);
  }
  return dir;
}

/**
 * The directory whose files are served: the framework's output directory (or the first of
 * its fallbacks that exists), which must be a real directory inside the checkout. A path
 * from angular.json or a symbolic link could otherwise point anywhere on the build machine.
 */
export async function findOutput(src: string, fw: DetectedFramework): Promise<string> {
  const root = await realpath(src);
  for (const candidate of [fw.outputDirectory, ...fw.outputFallbacks]) {
    const path = resolve(src, candidate);
    const rel = relative(src, path);
    if (rel.startsWith('..') || isAbsolute(rel)) {
      throw new BuildError(`The output directory "${candidate}" is outside the repository.`);
    }
    const stats = await lstat(path).catch(() => null);
    if (!stats) continue;
    const real = await realpath(path);
    const realRel = relative(root, real);
    if (!stats.isDirectory() || realRel.startsWith('..') || isAbsolute(realRel)) {
      throw new BuildError(`The output directory "${candidate}" must be a directory inside the repository.`);
    }
    return path;
  }
  const hint = fw.outputHint ? ` ${fw.outputHint}` : '';
  throw new BuildError(
    `The build did not create the output directory "${fw.outputDirectory}".${hint} ` +
      "Check the build log, or set the project's framework if it was detected wrongly.",
  );
}

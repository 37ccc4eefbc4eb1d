import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { BuildError } from '../../platform/sandbox/build-error.ts';

const StringMap = z.record(z.string(), z.unknown()).catch({});

/** The parts of a repository's package.json the builder reads; everything else is ignored. */
export const PackageJson = z.looseObject({
  /** Runtime dependencies: name to version range. */
  dependencies: StringMap.optional(),
  /** Build-time dependencies: name to version range. */
  devDependencies: StringMap.optional(),
  /** npm scripts: name to shell command. */
  scripts: z.record(z.string(), z.string()).catch({}).optional(),
  /** npm, yarn and bun workspaces: folder patterns, or yarn's `{ packages }`. */
  workspaces: z
    .union([z.array(z.string()), z.object({ packages: z.array(z.string()) }).transform((w) => w.packages)])
    .optional()
    .catch(undefined),
  /** Corepack's `name@version` of the package manager, e.g. `pnpm@9.1.0`. */
  packageManager: z.string().optional().catch(undefined),
});
export type PackageJson = z.infer<typeof PackageJson>;

/** Reads `<dir>/package.json`; null when there is none. A file that is not JSON is a BuildError. */
export async function readPackageJson(dir: string): Promise<PackageJson | null> {
  let text: string;
  try {
    text = await readFile(join(dir, 'package.json'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new BuildError(`package.json is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = PackageJson.safeParse(json);
  if (!parsed.success) throw new BuildError('package.json must contain a JSON object');
  return parsed.data;
}

/** Whether the package declares `name` in dependencies or devDependencies. */
export function hasDependency(pkg: PackageJson | null, name: string): boolean {
  return Boolean(
    pkg && (Object.hasOwn(pkg.dependencies ?? {}, name) || Object.hasOwn(pkg.devDependencies ?? {}, name)),
  );
}

export function hasScript(pkg: PackageJson | null, name: string): boolean {
  return Boolean(pkg?.scripts && typeof pkg.scripts[name] === 'string' && pkg.scripts[name].trim() !== '');
}

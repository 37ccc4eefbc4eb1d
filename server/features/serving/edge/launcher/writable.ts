import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isDir } from '../../../../core/file-kind.ts';
import type { Target } from '../resolve-host.ts';
import type { LauncherState } from './state.ts';

/** A bind of one writable folder: the deployment's own host folder, at its place in the artifact. */
export interface WritableBind {
  source: string;
  target: string;
}

/** Where the deployment's writable folders live, or null without RuntimeLauncherOptions.stateDir. */
export const stateOf = (s: LauncherState, deploymentId: string) =>
  s.opts.stateDir ? join(s.opts.stateDir, deploymentId) : null;

/** A folder and every folder and file under it, for Sandbox.prepare. */
async function treeOf(root: string): Promise<string[]> {
  const all = [root];
  for (const entry of await readdir(root, { recursive: true })) all.push(join(root, entry));
  return all;
}

/** The app's writable folders: a host folder of the deployment's own, bound at each. */
export async function writableFolders(
  s: LauncherState,
  target: Target,
  dir: string,
): Promise<WritableBind[]> {
  const state = stateOf(s, target.deploymentId);
  if (!state || !target.writable?.length) return [];
  const binds = [];
  for (const rel of target.writable) {
    const source = join(state, createHash('sha256').update(rel).digest('hex').slice(0, 16));
    const mountPoint = join(dir, rel);
    // The mount point must exist in the (shared, read-only to the app) folder of the artifact.
    await mkdir(mountPoint, { recursive: true });
    if (!(await isDir(source))) await copyAside(s, state, source, mountPoint);
    binds.push({ source, target: mountPoint });
  }
  return binds;
}

/**
 * First start: the folder begins as the build left it (Next.js's .next holds the prerendered
 * pages that ISR rewrites), copied aside and renamed in whole.
 */
async function copyAside(s: LauncherState, state: string, source: string, mountPoint: string): Promise<void> {
  const fresh = `${source}.${process.pid}.tmp`;
  await rm(fresh, { recursive: true, force: true });
  await cp(mountPoint, fresh, { recursive: true, verbatimSymlinks: true });
  await mkdir(state, { recursive: true });
  await rename(fresh, source);
  await s.opts.prepare?.(await treeOf(source));
}

import { chmod, chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { trySandbox } from '../detect.ts';
import { INSIDE_UID } from '../spawn.ts';
import type { SandboxState } from './state.ts';

/**
 * Checks once that a real sandbox runs on this machine: why builds and apps are refused (the
 * whole message), or null when it runs.
 */
export async function whyUnavailable(s: Omit<SandboxState, 'unavailable'>): Promise<string | null> {
  let unavailable: string | null = null;
  if ('missing' in s.found) {
    unavailable = `these programs are missing: ${s.found.missing.join(', ')}. Install them`;
  } else if (process.platform !== 'linux') {
    unavailable = 'it needs Linux (user, PID and network namespaces)';
  } else {
    unavailable = await trySandboxHere(s);
  }
  if (!unavailable) return unavailable;
  return (
    `Builds and server apps are refused: the sandbox cannot run on this machine: ${unavailable}. ` +
    'docs/security.md says what it needs (bubblewrap, passt, nftables, a usable /dev/net/tun); ' +
    'set SLIPWAY_SANDBOX=off only if one trusted user deploys here.'
  );
}

/** Runs a test sandbox over a workspace as a build would: why it failed, or null. */
async function trySandboxHere(s: Omit<SandboxState, 'unavailable'>): Promise<string | null> {
  const { config, opts } = s;
  await writeEtc(s.etcDir);
  const probe = join(opts.workspacesDir, `.sandbox-check-${process.pid}`);
  await mkdir(probe, { recursive: true });
  if (s.isRoot) {
    // bwrap binds paths as the sandbox's user, who must be able to pass through (not list) the
    // directories above them.
    await makeSearchable([
      opts.dataDir,
      opts.workspacesDir,
      join(opts.dataDir, 'sandbox'),
      s.etcDir,
      ...(opts.searchable ?? []),
    ]);
    await chown(probe, config.user.uid, config.user.gid);
  }
  const blocked = s.isRoot ? await firstUnsearchable(dirname(opts.dataDir)) : null;
  const failure = blocked
    ? `the sandbox's user (${config.user.uid}) cannot pass through ${blocked} to the data directory: ` +
      `make it searchable (chmod o+x ${blocked}) or move SLIPWAY_DATA_DIR`
    : await trySandbox(s.settings, probe);
  await rm(probe, { recursive: true, force: true });
  if (!failure) return null;
  return blocked ? failure : `a test sandbox failed: ${failure}`;
}

/** The sandbox's user and group, and git's trust of every directory, in its own /etc files. */
async function writeEtc(etcDir: string): Promise<void> {
  await mkdir(etcDir, { recursive: true });
  await writeFile(
    join(etcDir, 'passwd'),
    `sandbox:x:${INSIDE_UID}:${INSIDE_UID}:Slipway sandbox:/tmp:/bin/sh\n`,
  );
  await writeFile(join(etcDir, 'group'), `sandbox:x:${INSIDE_UID}:\n`);
  await writeFile(join(etcDir, 'gitconfig'), '[safe]\n\tdirectory = *\n');
}

/** Makes each directory (made if need be) one that others may pass through. */
async function makeSearchable(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    await mkdir(dir, { recursive: true });
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o001);
  }
}

/** The first directory from `dir` up to `/` that others may not pass through, or null. */
async function firstUnsearchable(dir: string): Promise<string | null> {
  for (let d = dir; ; d = dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) return d;
    if (d === dirname(d)) return null;
  }
}

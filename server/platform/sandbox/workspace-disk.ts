import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rm, rmdir, statfs } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describeBytes } from '../../core/format.ts';
import { findProgram } from './detect.ts';
import { pollUntil, watchDisk } from './disk-watch.ts';

/** One build's workspace, limited to SLIPWAY_SANDBOX_DISK. */
export interface Workspace {
  readonly dir: string;
  /** Calls `onFull` once, with the message for the log, when the build reaches the limit. */
  watch(onFull: (message: string) => void): { stop(): void };
  /** The message when the workspace is at its limit now (a file system of its own), else null. */
  full(): Promise<string | null>;
  /** Unmounts and removes the workspace with everything in it. */
  remove(): Promise<void>;
}

/** How build workspaces are made and their disk use bounded. */
export interface WorkspaceDisks {
  /**
   * `kernel`: each workspace is an ext4 file system of its own, in a sparse image of
   * SLIPWAY_SANDBOX_DISK bytes, so writes past it fail with ENOSPC. `watch`: a folder whose use
   * `du` measures every second.
   */
  readonly mode: 'kernel' | 'watch';
  /** In `watch` mode, why, as said at start-up and at the top of each build log; else null. */
  readonly warning: string | null;
  /** A fresh workspace under `parent` (made if missing). */
  create(parent: string): Promise<Workspace>;
  /** Removes `dir` and everything under it, unmounting the workspaces mounted there first. */
  clear(dir: string): Promise<void>;
}

export interface WorkspaceDisksOptions {
  limitBytes: number;
  /** Where builds' workspaces are: leftovers of a service that died are removed from it. */
  workspacesDir: string;
  /** `watch` forces the watcher (SLIPWAY_SANDBOX_DISK_MODE); `auto` prefers the kernel's limit. */
  mode: 'auto' | 'watch';
  /** mount(2) needs root on the host. */
  isRoot: boolean;
}

/** The one message for a build past its disk limit, whichever way it was found. */
export function diskLimitMessage(limitBytes: number): string {
  return `The build wrote more than ${describeBytes(limitBytes)} in its workspace, the limit (SLIPWAY_SANDBOX_DISK).`;
}

const run = (file: string, args: string[]) =>
  new Promise<void>((resolve, reject) => {
    execFile(file, args, { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`${basename(file)}: ${stderr.trim() || err.message}`));
      else resolve();
    });
  });

/** Mount points listed in /proc/self/mountinfo (octal escapes decoded), deepest first. */
export async function mountPoints(): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const points = text
    .split('\n')
    .filter(Boolean)
    .map((line) =>
      line.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))),
    );
  return points.sort((a, b) => b.length - a.length);
}

const isUnder = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** When this process started, in clock ticks since boot: with the pid, it names the process for good. */
async function startTime(pid: number): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

/** A workspace's name says which process made it: build-<pid>.<start time>-XXXXXX. */
const OWNED = /^build-(\d+)\.(\d+)-[A-Za-z0-9]{6}(\.img)?$/;

/** Whether the process that made the workspace named `name` still runs; null when no owner is named. */
async function ownerAlive(name: string): Promise<boolean | null> {
  const m = OWNED.exec(name);
  if (!m) return null;
  return (await startTime(Number(m[1]))) === m[2];
}

/**
 * The mechanism: a sparse file of exactly `limitBytes` (what the workspace may take of the
 * host's disk, its own bookkeeping included), an ext4 file system without a journal (a
 * workspace does not outlive a crash) or blocks reserved for root, loop-mounted `nosuid,nodev`.
 * Making, mounting and unmounting one costs about 20 ms (docs/security.md).
 */
function kernelDisks(
  limitBytes: number,
  tools: { mkfs: string; mount: string; umount: string },
  owner: string,
) {
  const k: KernelDisks = { limitBytes, tools, owner };
  return {
    create: (parent: string) => createKernelDisk(k, parent),
    remove: (dir: string) => removeKernelDisk(k, dir),
    unmountUnder: (dir: string) => unmountUnder(k, dir),
  };
}

/** What kernelDisks' functions share: the size, the programs and the owner's name. */
interface KernelDisks {
  limitBytes: number;
  tools: { mkfs: string; mount: string; umount: string };
  owner: string;
}

async function unmountUnder(k: KernelDisks, dir: string): Promise<void> {
  for (const point of await mountPoints()) {
    if (!isUnder(point, dir)) continue;
    // Lazily when busy: the file system goes once nothing holds it, and the loop device with it.
    await run(k.tools.umount, [point]).catch(() => run(k.tools.umount, ['-l', point]));
  }
}

async function removeKernelDisk(k: KernelDisks, dir: string): Promise<void> {
  await unmountUnder(k, dir);
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  await rm(`${dir}.img`, { force: true });
}

async function createKernelDisk(k: KernelDisks, parent: string): Promise<Workspace> {
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, `build-${k.owner}-`));
  try {
    await makeDisk(k, dir, `${dir}.img`);
  } catch (err) {
    await removeKernelDisk(k, dir).catch(() => undefined);
    throw new Error(`The build's workspace could not be made: ${(err as Error).message}`);
  }
  const full = () => diskFull(k.limitBytes, dir);
  return {
    dir,
    full,
    // statfs is one system call: checked four times a second.
    watch: (onFull) => pollUntil(250, full, onFull),
    remove: () => removeKernelDisk(k, dir),
  };
}

/** Makes the sparse image and its file system, and mounts it on `dir`. */
async function makeDisk(k: KernelDisks, dir: string, image: string): Promise<void> {
  const file = await open(image, 'wx', 0o600);
  await file.truncate(k.limitBytes).finally(() => file.close());
  await run(k.tools.mkfs, [
    '-q',
    '-F',
    '-b',
    '4096',
    // One inode for each 8 KiB: node_modules trees are many small files.
    '-i',
    '8192',
    '-I',
    '256',
    '-O',
    '^has_journal',
    '-m',
    '0',
    '-E',
    'lazy_itable_init=1,nodiscard',
    image,
  ]);
  // noinit_itable: the kernel does not zero the inode tables in the background, which would
  // fill the sparse image.
  await run(k.tools.mount, ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noatime,noinit_itable', image, dir]);
  await rmdir(join(dir, 'lost+found'));
}

/** Workspace.full of a disk of `limitBytes` mounted on `dir`. */
async function diskFull(limitBytes: number, dir: string): Promise<string | null> {
  const s = await statfs(dir).catch(() => null);
  if (!s) return null;
  // ext4 refuses writes with a little left (per-CPU counters, delayed allocation): measured
  // 0.7 to 1 MiB on 64 MiB to 512 MiB; this margin counts that as full.
  const margin = 1024 ** 2 + (s.blocks * s.bsize) / 256;
  return s.bavail * s.bsize < margin || s.ffree === 0 ? diskLimitMessage(limitBytes) : null;
}

/** Today's watcher: `du` every second, RLIMIT_FSIZE per file (disk-watch.ts). */
function watchedDisks(limitBytes: number, warning: string): WorkspaceDisks {
  return {
    mode: 'watch',
    warning,
    async create(parent) {
      await mkdir(parent, { recursive: true });
      const dir = await mkdtemp(join(parent, 'build-'));
      return {
        dir,
        watch: (onFull) => watchDisk(dir, limitBytes, () => onFull(diskLimitMessage(limitBytes))),
        full: async () => null,
        remove: () => rm(dir, { recursive: true, force: true, maxRetries: 3 }),
      };
    },
    clear: (dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 }),
  };
}

/**
 * Removes the workspaces a service that is gone left under `workspacesDir` (it was killed, the
 * machine lost power): unmounts them and deletes them with their images. Workspaces of a service
 * still running on the same data directory are left alone. Returns the mount points unmounted.
 */
export async function removeLeftovers(
  workspacesDir: string,
  remove: (dir: string) => Promise<void>,
): Promise<string[]> {
  const unmounted: string[] = [];
  const seen = new Set<string>();
  for (const point of await mountPoints()) {
    if (!isUnder(point, workspacesDir) || (await ownerAlive(basename(point))) !== false) continue;
    await remove(point);
    unmounted.push(point);
    seen.add(point);
  }
  // Workspaces are made in a folder per deployment (or, the start-up's test one, right there).
  const top = await readdir(workspacesDir).catch(() => []);
  const names = [
    ...top.map((name) => ({ at: workspacesDir, name })),
    ...(
      await Promise.all(
        top.map(async (d) =>
          (await readdir(join(workspacesDir, d)).catch(() => [])).map((name) => ({
            at: join(workspacesDir, d),
            name,
          })),
        ),
      )
    ).flat(),
  ];
  for (const { at, name } of names) {
    const dir = join(at, name.replace(/\.img$/, ''));
    if (seen.has(dir) || (await ownerAlive(name)) !== false) continue;
    seen.add(dir);
    await remove(dir);
  }
  return unmounted;
}

/**
 * The workspaces as this machine allows: a file system of its own for each (the kernel holds the
 * limit) when the service runs as root on Linux with mkfs.ext4 and loop devices, which a test
 * workspace made at start-up proves; otherwise the watcher, with a warning that says why. Removes
 * what a service that died left mounted first.
 */
export async function createWorkspaceDisks(opts: WorkspaceDisksOptions): Promise<WorkspaceDisks> {
  const watched = (why: string) =>
    watchedDisks(
      opts.limitBytes,
      `Disk: SLIPWAY_SANDBOX_DISK is checked every second, not enforced by the kernel (${why}): ` +
        'a build can write past it between two checks (docs/security.md).',
    );
  if (opts.mode === 'watch') return watched('SLIPWAY_SANDBOX_DISK_MODE=watch');
  if (process.platform !== 'linux') return watched('it needs Linux');
  if (!opts.isRoot) return watched('the service does not run as root, which mounting needs');
  const mkfs = findProgram('mkfs.ext4');
  const mount = findProgram('mount');
  const umount = findProgram('umount');
  if (!mkfs || !mount || !umount) {
    return watched('mkfs.ext4 (Debian package e2fsprogs), mount or umount is missing');
  }
  const self = await startTime(process.pid);
  if (!self) return watched('/proc is not mounted');
  const disks = kernelDisks(opts.limitBytes, { mkfs, mount, umount }, `${process.pid}.${self}`);
  await removeLeftovers(opts.workspacesDir, disks.remove);
  try {
    const probe = await disks.create(opts.workspacesDir);
    await probe.remove();
  } catch (err) {
    return watched((err as Error).message.replace(/^The build's workspace could not be made: /, ''));
  }
  return { mode: 'kernel', warning: null, create: disks.create, clear: disks.remove };
}

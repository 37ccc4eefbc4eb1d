import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { every } from '../lib/every.ts';
import { isDir } from '../lib/file-kind.ts';
import { diskUsage } from '../sandbox/disk-watch.ts';
import type { SandboxShare } from '../sandbox/index.ts';
import type { ArtifactReader } from './artifact-reader.ts';
import { createMaterializer } from './materialize.ts';
import type { Target } from './resolve-host.ts';
import type { RuntimeSupervisor } from './runtime.ts';

export interface RuntimeLauncherOptions {
  supervisor: Pick<RuntimeSupervisor, 'start' | 'stop' | 'portOf'>;
  artifacts: ArtifactReader;
  /** Where artifacts are written out to run (`<data dir>/runtimes`). */
  runtimesDir: string;
  /**
   * Where each deployment's writable folders (Target.writable) live, `<dir>/<deployment>/...`:
   * they outlive the app's restarts and go when the deployment's app is stopped for good.
   */
  stateDir?: string;
  /** Most bytes of one deployment's writable folders; checked every minute, emptied when over (default 1 GiB). */
  stateMaxBytes?: number;
  /** Hands freshly made folders to the sandbox's user (Sandbox.prepare). */
  prepare?: (dirs: string[]) => Promise<void>;
  /** Told when a deployment's writable folders were emptied for being over the limit. */
  onStateCleared?: (deploymentId: string, bytes: number) => void;
  /** The app's environment variables, decrypted: the project's for `target.environment`. */
  env(target: Target): Promise<Record<string, string>>;
  /** The memory and CPU share of the app's sandbox, from its organization's plan; default none (the sandbox's). */
  share?(target: Target): Promise<SandboxShare>;
  /** Stops an app that has had no request for this long (default 30 minutes; 0 never). */
  idleStopMs?: number;
  /** After a failed start, later requests fail at once for this long instead of retrying (default 10 s). */
  retryAfterMs?: number;
  now?: () => number;
}

export interface RuntimeLauncher {
  /** The port of the deployment's running app, starting it first if needed. */
  ensure(target: Target): Promise<number>;
  /** Records a request, which keeps the app from being stopped as idle. */
  touch(deploymentId: string): void;
  /**
   * The port of the deployment's app when it is running (or restarting) and no start is under
   * way, recording the request as touch() does; undefined when ensure() is needed. The warm path
   * of every proxied request: no promise.
   */
  runningPort(deploymentId: string): number | undefined;
  /** The projects that have an app this launcher started (or is starting) and has not stopped. */
  projects(): string[];
  /**
   * Stops every app of the project that this launcher started, those still starting included, and
   * resolves once their processes are gone. The next request for one starts it again.
   */
  stopProject(projectId: string): Promise<void>;
  /** Stops the idle timer (the supervisor's stopAll() ends the apps). */
  close(): void;
}

/**
 * Starts `node` deployments on their first request: writes the artifact out, then runs its start
 * command under the supervisor with the project's variables. Every edge process can therefore
 * serve any deployment, also after a restart, and apps nobody visits stop using memory.
 */
export function createRuntimeLauncher(opts: RuntimeLauncherOptions): RuntimeLauncher {
  const { supervisor } = opts;
  const now = opts.now ?? Date.now;
  const idleStopMs = opts.idleStopMs ?? 30 * 60_000;
  const retryAfterMs = opts.retryAfterMs ?? 10_000;
  const materializer = createMaterializer(opts.artifacts, opts.runtimesDir);
  const lastUsed = new Map<string, number>();
  /** Starts that failed in the last `retryAfterMs`: their error answers until then. */
  const failures = new LRUCache<string, Error>({
    max: 10_000,
    ttl: Math.max(1, retryAfterMs),
    ttlResolution: 0,
    perf: { now },
  });
  /** Starts under way: concurrent first requests wait for the one start, not proxy to a port not yet open. */
  const starting = new Map<string, Promise<number>>();
  /**
   * Every app started or starting, by deployment: its project, and which start is current.
   * stopProject() removes it, so a start that was writing files out at that moment does not go on
   * to run a suspended project's app.
   */
  const apps = new Map<string, { projectId: string; launch: symbol }>();

  const cancelled = (id: string) =>
    new Error(
      `The app of deployment ${id} was stopped while it started: its project was suspended or deleted.`,
    );

  const launch = async (target: Target, launchId: symbol): Promise<number> => {
    const id = target.deploymentId;
    if (!target.startCommand) throw new Error(`deployment ${id} has no start command`);
    if (!target.artifactId) throw new Error(`deployment ${id} has no artifact`);
    const dir = await materializer.dirFor(target.artifactId);
    const writable = await writableFolders(target, dir);
    const env = { ...target.env, ...(await opts.env(target)) };
    const share = await opts.share?.(target);
    if (apps.get(id)?.launch !== launchId) throw cancelled(id);
    // A shell runs it: start commands are written as shell lines (`npm start`, `node dist/server.js`).
    const { port } = await supervisor.start(id, {
      dir,
      command: ['/bin/sh', '-c', target.startCommand],
      env,
      ...(writable.length ? { writable } : {}),
      ...(share ? { share } : {}),
    });
    return port;
  };

  /** A folder and every folder and file under it, for Sandbox.prepare. */
  const treeOf = async (root: string): Promise<string[]> => {
    const all = [root];
    for (const entry of await readdir(root, { recursive: true })) all.push(join(root, entry));
    return all;
  };
  const stateOf = (deploymentId: string) => (opts.stateDir ? join(opts.stateDir, deploymentId) : null);
  /** The app's writable folders: a host folder of the deployment's own, bound at each. */
  const writableFolders = async (target: Target, dir: string) => {
    const state = stateOf(target.deploymentId);
    if (!state || !target.writable?.length) return [];
    const binds = [];
    for (const rel of target.writable) {
      const source = join(state, createHash('sha256').update(rel).digest('hex').slice(0, 16));
      const mountPoint = join(dir, rel);
      // The mount point must exist in the (shared, read-only to the app) folder of the artifact.
      await mkdir(mountPoint, { recursive: true });
      if (!(await isDir(source))) {
        // First start: the folder begins as the build left it (Next.js's .next holds the
        // prerendered pages that ISR rewrites), copied aside and renamed in whole.
        const fresh = `${source}.${process.pid}.tmp`;
        await rm(fresh, { recursive: true, force: true });
        await cp(mountPoint, fresh, { recursive: true, verbatimSymlinks: true });
        await mkdir(state, { recursive: true });
        await rename(fresh, source);
        await opts.prepare?.(await treeOf(source));
      }
      binds.push({ source, target: mountPoint });
    }
    return binds;
  };
  const stateMaxBytes = opts.stateMaxBytes ?? 1024 ** 3;
  /**
   * A running app whose writable folders grew past the bound is stopped and its folders go back
   * to what the build left; its next request starts it again.
   */
  const boundState = async () => {
    for (const id of [...lastUsed.keys()]) {
      const state = stateOf(id);
      if (!state) return;
      const bytes = await diskUsage(state);
      if (bytes === null || bytes <= stateMaxBytes) continue;
      lastUsed.delete(id);
      apps.delete(id);
      await supervisor.stop(id);
      await rm(state, { recursive: true, force: true });
      opts.onStateCleared?.(id, bytes);
    }
  };

  // The idle check is not held up by a slow bound check (du of big folders): that one runs aside,
  // and its failures wait for the next tick.
  const timer =
    idleStopMs > 0
      ? every(
          Math.min(idleStopMs, 60_000),
          () => {
            const t = now();
            for (const [id, at] of lastUsed) {
              if (t - at < idleStopMs) continue;
              lastUsed.delete(id);
              apps.delete(id);
              void supervisor.stop(id);
            }
            void boundState().catch(() => undefined);
          },
          { onError: () => undefined },
        )
      : null;

  return {
    async ensure(target) {
      const id = target.deploymentId;
      const pending = starting.get(id);
      if (pending) return pending;
      const running = supervisor.portOf(id);
      if (running !== undefined) {
        if (lastUsed.has(id)) lastUsed.set(id, now());
        return running;
      }
      const failed = failures.get(id);
      if (failed) throw failed;
      const launchId = Symbol(id);
      apps.set(id, { projectId: target.projectId, launch: launchId });
      const start = launch(target, launchId).then(
        (port) => {
          failures.delete(id);
          lastUsed.set(id, now());
          return port;
        },
        (err: unknown) => {
          // A start that stopProject() cut short is no failure to remember: a resumed project's
          // next request must start the app, not be refused for ten seconds.
          if (apps.get(id)?.launch === launchId) {
            apps.delete(id);
            if (retryAfterMs > 0) failures.set(id, err instanceof Error ? err : new Error(String(err)));
          }
          throw err;
        },
      );
      starting.set(id, start);
      try {
        return await start;
      } finally {
        starting.delete(id);
      }
    },
    touch(deploymentId) {
      if (lastUsed.has(deploymentId)) lastUsed.set(deploymentId, now());
    },
    runningPort(deploymentId) {
      if (starting.has(deploymentId)) return undefined;
      const port = supervisor.portOf(deploymentId);
      if (port !== undefined && lastUsed.has(deploymentId)) lastUsed.set(deploymentId, now());
      return port;
    },
    projects() {
      return [...new Set([...apps.values()].map((a) => a.projectId))];
    },
    async stopProject(projectId) {
      const ids = [...apps].filter(([, a]) => a.projectId === projectId).map(([id]) => id);
      await Promise.all(
        ids.map(async (id) => {
          apps.delete(id);
          lastUsed.delete(id);
          failures.delete(id);
          const pending = starting.get(id);
          // Ends the process, also one the supervisor is still waiting on to listen.
          await supervisor.stop(id);
          // A start still writing files out sees it was cancelled and starts nothing.
          await pending?.catch(() => undefined);
        }),
      );
    },
    close() {
      void timer?.stop();
    },
  };
}

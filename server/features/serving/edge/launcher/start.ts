import type { Target } from '../resolve-host.ts';
import { touch, type LauncherState } from './state.ts';
import { writableFolders } from './writable.ts';

/** The port of the deployment's app, starting it (once, for concurrent requests) when not running. */
export async function ensure(s: LauncherState, target: Target): Promise<number> {
  const id = target.deploymentId;
  const pending = s.starting.get(id);
  if (pending) return pending;
  const running = s.supervisor.portOf(id);
  if (running !== undefined) {
    touch(s, id);
    return running;
  }
  const failed = s.failures.get(id);
  if (failed) throw failed;
  const launchId = Symbol(id);
  s.apps.set(id, { projectId: target.projectId, launch: launchId });
  const start = launch(s, target, launchId).then(
    (port) => {
      s.failures.delete(id);
      s.lastUsed.set(id, s.now());
      return port;
    },
    (err: unknown) => {
      // A start that stopProject() cut short is no failure to remember: a resumed project's
      // next request must start the app, not be refused for ten seconds.
      if (s.apps.get(id)?.launch === launchId) {
        s.apps.delete(id);
        if (s.retryAfterMs > 0) s.failures.set(id, err instanceof Error ? err : new Error(String(err)));
      }
      throw err;
    },
  );
  s.starting.set(id, start);
  try {
    return await start;
  } finally {
    s.starting.delete(id);
  }
}

const cancelled = (id: string) =>
  new Error(
    `The app of deployment ${id} was stopped while it started: its project was suspended or deleted.`,
  );

/** Writes the artifact out and runs the app's start command under the supervisor. */
async function launch(s: LauncherState, target: Target, launchId: symbol): Promise<number> {
  const id = target.deploymentId;
  if (!target.startCommand) throw new Error(`deployment ${id} has no start command`);
  if (!target.artifactId) throw new Error(`deployment ${id} has no artifact`);
  const dir = await s.materializer.dirFor(target.artifactId);
  const writable = await writableFolders(s, target, dir);
  const env = { ...target.env, ...(await s.opts.env(target)) };
  const share = await s.opts.share?.(target);
  if (s.apps.get(id)?.launch !== launchId) throw cancelled(id);
  // A shell runs it: start commands are written as shell lines (`npm start`, `node dist/server.js`).
  const { port } = await s.supervisor.start(id, {
    dir,
    command: ['/bin/sh', '-c', target.startCommand],
    env,
    ...(writable.length ? { writable } : {}),
    ...(share ? { share } : {}),
  });
  return port;
}

/**
 * Stops every app of the project that this launcher started, those still starting included, and
 * resolves once their processes are gone.
 */
export async function stopProject(s: LauncherState, projectId: string): Promise<void> {
  const ids = [...s.apps].filter(([, a]) => a.projectId === projectId).map(([id]) => id);
  await Promise.all(
    ids.map(async (id) => {
      s.apps.delete(id);
      s.lastUsed.delete(id);
      s.failures.delete(id);
      const pending = s.starting.get(id);
      // Ends the process, also one the supervisor is still waiting on to listen.
      await s.supervisor.stop(id);
      // A start still writing files out sees it was cancelled and starts nothing.
      await pending?.catch(() => undefined);
    }),
  );
}

import type { LRUCache } from 'lru-cache';
import type { RuntimeLauncherOptions } from './types.ts';
import type { Materializer } from '../materialize.ts';

/** An app started or starting: its project, and which start is current. */
export interface LaunchedApp {
  projectId: string;
  launch: symbol;
}

/**
 * What one runtime launcher keeps (createRuntimeLauncher makes it once), passed to the functions
 * that start, touch, bound and stop apps rather than closed over.
 */
export interface LauncherState {
  opts: RuntimeLauncherOptions;
  supervisor: RuntimeLauncherOptions['supervisor'];
  now: () => number;
  /** RuntimeLauncherOptions.idleStopMs, with its default. */
  idleStopMs: number;
  /** RuntimeLauncherOptions.retryAfterMs, with its default. */
  retryAfterMs: number;
  /** RuntimeLauncherOptions.stateMaxBytes, with its default. */
  stateMaxBytes: number;
  materializer: Materializer;
  /** When each app this launcher started last had a request. */
  lastUsed: Map<string, number>;
  /** Starts that failed in the last `retryAfterMs`: their error answers until then. */
  failures: LRUCache<string, Error>;
  /** Starts under way: concurrent first requests wait for the one start, not proxy to a port not yet open. */
  starting: Map<string, Promise<number>>;
  /**
   * Every app started or starting, by deployment: its project, and which start is current.
   * stopProject() removes it, so a start that was writing files out at that moment does not go on
   * to run a suspended project's app.
   */
  apps: Map<string, LaunchedApp>;
}

/** Records a request for an app this launcher started, which keeps it from being stopped as idle. */
export function touch(s: LauncherState, deploymentId: string): void {
  if (s.lastUsed.has(deploymentId)) s.lastUsed.set(deploymentId, s.now());
}

/** Forgets an app this launcher started: it is no longer idle-checked nor its project's. */
export function forget(s: LauncherState, deploymentId: string): void {
  s.lastUsed.delete(deploymentId);
  s.apps.delete(deploymentId);
}

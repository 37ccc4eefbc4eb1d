import type { SandboxShare } from '../../../../platform/sandbox/index.ts';
import type { ArtifactReader } from '../artifact-reader.ts';
import type { Target } from '../resolve-host.ts';
import type { RuntimeSupervisor } from '../runtime.ts';

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
  /**
   * Whether the app on `port` is answering a request or holds a WebSocket (Proxy.inUse): such an
   * app is not idle, however long ago its last request began.
   */
  inUse?: (port: number) => boolean;
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

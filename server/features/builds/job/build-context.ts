import type { ArtifactStore } from '../artifacts.ts';
import type { BuildCacheStore } from '../build-cache-store.ts';
import type { LookupAll } from '../../../core/ssrf.ts';
import type { Sandbox } from '../../../platform/sandbox/index.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import type { DeploymentRuntime } from '../../../platform/store/deployment-runtime.ts';
import type { DeploymentRow } from '../../deployments/index.ts';
import type { ProjectRow } from '../../../platform/deps/project-with-role.ts';
import type { LogBuffer } from './log-buffer.ts';

export interface BuildJobOptions {
  artifacts: ArtifactStore;
  /** The health request through the edge; resolves when the edge serves the deployment. */
  probe(deployment: { id: string; host: string }, signal: AbortSignal): Promise<void>;
  /** Resolves repository hosts before the checkout; default `dns.lookup(host, { all: true })`. */
  lookup?: LookupAll;
  /** Where the checkout, install and build run. */
  sandbox: Sandbox;
}

/** One attempt at one deployment's build: what every stage of it reads. */
export interface BuildAttempt {
  deps: Deps;
  opts: BuildJobOptions;
  cacheStore: BuildCacheStore;
  deployment: DeploymentRow;
  project: ProjectRow;
  logs: LogBuffer;
  signal: AbortSignal;
}

/** A deployment's stored build, ready to go live. */
export interface Built {
  artifactId: string;
  runtime: DeploymentRuntime;
}

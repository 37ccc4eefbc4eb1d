import type { SlipwayClient } from '../api/client/index.ts';
import { envelope } from '../api/schemas/common.ts';
import { Deployment } from '../api/schemas/deployments.ts';
import type { Project } from '../api/schemas/projects.ts';
import type { RunContext } from './context.ts';
import type { HealthCheck } from './health-check.ts';
import type { Probe } from './http-probe.ts';
import type { Command, Inputs } from './inputs.ts';
import type { Runner } from './runner.ts';

/** What the step tells GitHub as it goes: a Deployment and its statuses, the PR comment. */
export interface Reporter {
  /** A Slipway deployment was created or promoted; the step may still wait for it. */
  started(deployment: Deployment, project: Project, command: Command): Promise<void>;
  /** The step is over. */
  finished(result: StepResult): Promise<void>;
}

/** Everything a command needs, injected. */
export interface Step {
  inputs: Inputs;
  ctx: RunContext;
  client: SlipwayClient;
  runner: Runner;
  reporter: Reporter;
  probe: Probe;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** One deployment the step touched, for the summary. */
export interface HistoryEntry {
  /** What happened to it: deployed, promoted, rollback... */
  action: string;
  deployment: Deployment;
}

/** How a command ended; the outputs, the summary and the comment are made from it. */
export interface StepResult {
  command: Command;
  project: Project;
  /** The deployment the step created or promoted last (after a rollback: the rollback). */
  deployment: Deployment | null;
  /** Every deployment the step touched, in order. */
  history: HistoryEntry[];
  /** The deployment production was rolled back from, by the rollback command or automatically. */
  rollbackFrom: string | null;
  /** The project's production URL once the step is done. */
  productionUrl: string | null;
  /** Time spent waiting for deployments, in milliseconds; null when the step did not wait. */
  waitedMs: number | null;
  timedOut: boolean;
  healthCheck: HealthCheck | null;
  /** The service answered an earlier try of this step again instead of acting twice. */
  replayed: boolean;
  /** Why the step fails; null when it succeeds. */
  failure: string | null;
}

/** A result with nothing yet but the command and project. */
export const emptyResult = (command: Command, project: Project): StepResult => ({
  command,
  project,
  deployment: null,
  history: [],
  rollbackFrom: null,
  productionUrl: project.deploymentUrl,
  waitedMs: null,
  timedOut: false,
  healthCheck: null,
  replayed: false,
  failure: null,
});

const DeploymentEnvelope = envelope(Deployment);

/**
 * POSTs an operation that answers a deployment, with the step's Idempotency-Key, and says
 * whether the service replayed an earlier answer (`Idempotent-Replayed: true`) rather than
 * acting again.
 */
export async function postForDeployment(
  client: SlipwayClient,
  path: string,
  key: string | undefined,
  body?: object,
): Promise<{ deployment: Deployment; replayed: boolean }> {
  const res = await client.request('POST', path, {
    ...(body === undefined ? {} : { body }),
    ...(key === undefined ? {} : { idempotencyKey: key }),
  });
  const parsed = DeploymentEnvelope.safeParse(res.body);
  if (!parsed.success) throw new Error(`POST ${path} answered an unexpected body: ${parsed.error.message}`);
  return { deployment: parsed.data.data, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

/** `dpl_x` / `dpl_x (commit abc1234)` for log lines. */
export const describe = (d: Deployment) =>
  d.commitHash ? `${d.id} (commit ${d.commitHash.slice(0, 7)})` : d.id;

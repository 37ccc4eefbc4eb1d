import type { CreateDeploymentBody } from '../api/schemas/deployments.ts';
import type { RunContext } from './context.ts';
import type { Inputs } from './inputs.ts';

/** The service keeps at most this much of a deployment's message. */
const MAX_MESSAGE = 1000;

/**
 * The body of `POST /v1/projects/<id>/deployments`: the inputs, else the event's defaults (the
 * PR head on pull_request events, else the pushed ref and GITHUB_SHA). A branch given as an
 * input drops the event's commit, which belongs to another branch. `target: auto` is preview on
 * pull_request events and otherwise left to the service, which picks production for the
 * project's branch.
 */
export function deploymentBody(inputs: Inputs, ctx: RunContext): CreateDeploymentBody {
  const branch = inputs.branch ?? ctx.branch;
  const commitHash = inputs.commit ?? (inputs.branch === undefined ? ctx.commit : undefined);
  const message =
    inputs.message ?? (commitHash !== undefined && commitHash === ctx.commit ? ctx.message : undefined);
  const target = inputs.target === 'auto' ? (ctx.pullRequest ? 'preview' : undefined) : inputs.target;
  const body: CreateDeploymentBody = {};
  if (branch !== undefined) body.branch = branch;
  if (commitHash !== undefined) body.commitHash = commitHash.toLowerCase();
  if (message !== undefined) body.message = message.slice(0, MAX_MESSAGE);
  if (target !== undefined) body.target = target;
  return body;
}

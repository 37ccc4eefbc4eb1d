import { ApiError } from '../api/client/index.ts';
import type { Deployment } from '../api/schemas/deployments.ts';
import { idempotencyKey } from './idempotency.ts';
import { settle } from './settle.ts';
import { describe, postForDeployment, type Step, type StepResult } from './step.ts';

/**
 * `command: rollback`: rolls production back from `deployment-id` (default: the current
 * production deployment) to `to`, or by default to the production deployment that went live
 * before it. The service reuses that earlier build, so it is live within seconds.
 */
export async function rollback(step: Step, result: StepResult): Promise<void> {
  const { inputs, ctx, runner } = step;
  const project = result.project;
  const from = inputs.deploymentId ?? project.productionDeploymentId;
  if (!from) throw new Error(`Project ${project.name} has no production deployment to roll back from.`);
  const key = idempotencyKey(
    ctx.run,
    'rollback',
    inputs.project,
    [inputs.deploymentId, inputs.to && `to-${inputs.to}`].filter(Boolean).join(':') || undefined,
  );
  const post = (id: string) =>
    postForDeployment(
      step.client,
      `/v1/deployments/${encodeURIComponent(id)}/rollback`,
      key,
      inputs.to ? { to: inputs.to } : undefined,
    );
  let answer: { deployment: Deployment; replayed: boolean };
  try {
    answer = await post(from);
  } catch (err) {
    // A retried step finds production already rolled back by its first try, and would roll
    // back that rollback. The service refuses our key on another path; the first try's request
    // went to what the current production deployment was rolled back from: replay it.
    if (!(
      err instanceof ApiError &&
      err.code === 'CONFLICT' &&
      err.message.includes('Idempotency-Key') &&
      !inputs.deploymentId
    )) {
      throw err;
    }
    const current = await step.client.deployments.get(from);
    if (!current.rollbackFrom) throw err;
    answer = await post(current.rollbackFrom);
  }
  const back = answer.deployment;
  result.deployment = back;
  result.replayed = answer.replayed;
  result.rollbackFrom = back.rollbackFrom ?? from;
  result.history.push({ action: 'rollback', deployment: back });
  if (answer.replayed) {
    runner.notice(
      `An earlier try of this step in this run attempt already rolled back to ${back.id}: not rolling back again.`,
    );
  } else {
    runner.info(`Rolling production of ${project.name} back from ${result.rollbackFrom}: ${describe(back)}`);
  }
  await step.reporter.started(back, project, 'rollback');
  if (!inputs.wait) return;
  await settle(step, result, back, false);
}

import { deploymentBody } from './deploy-request.ts';
import { bodyFingerprint, idempotencyKey } from './idempotency.ts';
import { settle } from './settle.ts';
import { uploadSource } from './upload-source.ts';
import { describe, postForDeployment, type Step, type StepResult } from './step.ts';

/**
 * `command: deploy`: starts a deployment of the branch and commit (from the inputs or the
 * event), or of the uploaded checkout or build output (`source`), then waits for it, health-checks it when it is production, and rolls back if asked.
 */
export async function deploy(step: Step, result: StepResult): Promise<void> {
  const { inputs, ctx, runner } = step;
  const body = deploymentBody(inputs, ctx);
  if (inputs.source !== 'git') Object.assign(body, await uploadSource(step, result.project.id));
  const key = idempotencyKey(ctx.run, 'deploy', inputs.project, bodyFingerprint(body));
  const { deployment, replayed } = await postForDeployment(
    step.client,
    `/v1/projects/${encodeURIComponent(result.project.id)}/deployments`,
    key,
    body,
  );
  result.deployment = deployment;
  result.replayed = replayed;
  result.history.push({ action: 'deploy', deployment });
  if (replayed) {
    runner.notice(
      `An earlier try of this step in this run attempt already started ${deployment.id}: following it instead of deploying again.`,
    );
  } else {
    runner.info(`Started ${deployment.target} deployment ${describe(deployment)} of ${deployment.branch}`);
  }
  await step.reporter.started(deployment, result.project, 'deploy');
  if (!inputs.wait) {
    runner.info(`Not waiting for ${deployment.id} (wait: false).`);
    return;
  }
  await settle(step, result, deployment, true);
}

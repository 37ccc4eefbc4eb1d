import type { Deployment } from '../api/schemas/deployments.ts';
import { formatDuration } from './duration.ts';
import { checkHealth, healthUrl } from './health-check.ts';
import { idempotencyKey } from './idempotency.ts';
import { describe, postForDeployment, type Step, type StepResult } from './step.ts';
import { waitForDeployment } from './wait.ts';

/**
 * Waits for a deployment the step started and records how it ended in `result`: failed (with the
 * service's error message and the end of the build log), timed out, or live. A production
 * deployment that goes live is then health-checked when asked to.
 */
export async function settle(step: Step, result: StepResult, deployment: Deployment, healthCheck: boolean) {
  const waited = await waitForDeployment(step, deployment, {
    timeoutMs: step.inputs.timeoutMs,
    streamLogs: step.inputs.streamLogs,
    title: `Build log of ${describe(deployment)}`,
  });
  const d = waited.deployment;
  record(result, d);
  result.waitedMs = (result.waitedMs ?? 0) + waited.waitedMs;
  if (waited.timedOut) {
    result.timedOut = true;
    result.failure =
      `Deployment ${d.id} was still ${d.status} after ${formatDuration(step.inputs.timeoutMs)} (the timeout input); ` +
      `it carries on in Slipway: ${d.url}. Raise timeout, or set wait: false to not wait.`;
    return;
  }
  if (d.status === 'failed') {
    result.failure = [
      `Deployment ${d.id} failed: ${d.errorMessage ?? 'no reason given'}`,
      ...(waited.logTail.length
        ? ['Last lines of the build log:', ...waited.logTail.map((l) => `  ${l}`)]
        : []),
    ].join('\n');
    return;
  }
  step.runner.info(`${describe(d)} is live at ${d.url}`);
  if (d.target === 'production') await refreshProductionUrl(step, result);
  if (healthCheck && d.target === 'production' && step.inputs.healthCheckPath) {
    await checkAndRollBack(step, result, d, step.inputs.healthCheckPath);
  }
}

/** Puts the newest state of a deployment in the result (its history entry, and as the step's deployment). */
function record(result: StepResult, d: Deployment) {
  result.deployment = d;
  for (const entry of result.history) if (entry.deployment.id === d.id) entry.deployment = d;
}

/** Reads the project's production URL again: it exists from the first live production deployment on. */
export async function refreshProductionUrl(step: Step, result: StepResult) {
  const project = await step.client.projects.get(result.project.id);
  result.project = project;
  result.productionUrl = project.deploymentUrl;
}

/**
 * Probes `<deployment URL><path>`. When it fails, the step fails; with rollback-on-failure,
 * production is first rolled back from this deployment to the one before it (which reuses its
 * earlier build, so it is live within seconds).
 */
async function checkAndRollBack(step: Step, result: StepResult, d: Deployment, path: string) {
  const url = healthUrl(d.url, path);
  step.runner.info(`Health check: GET ${url}`);
  const bypass = step.inputs.protectionBypass;
  const hc = await checkHealth(url, {
    probe: step.probe,
    sleep: (ms) => step.sleep(ms),
    ...(bypass ? { headers: { 'x-slipway-protection-bypass': bypass } } : {}),
  });
  result.healthCheck = hc;
  if (hc.ok) {
    step.runner.info(`Health check passed: ${hc.detail}`);
    return;
  }
  const failed = `Health check of ${url} failed: ${hc.detail}.`;
  if (!step.inputs.rollbackOnFailure) {
    result.failure = `${failed} Production serves ${d.id} regardless; set rollback-on-failure: true to roll back automatically.`;
    return;
  }
  step.runner.warning(`${failed} Rolling production back from ${d.id}.`);
  try {
    const key = idempotencyKey(step.ctx.run, 'auto-rollback', step.inputs.project, d.id);
    const { deployment: back } = await postForDeployment(
      step.client,
      `/v1/deployments/${d.id}/rollback`,
      key,
    );
    result.history.push({ action: 'automatic rollback', deployment: back });
    result.rollbackFrom = d.id;
    record(result, back);
    await settle(step, result, back, false);
    result.failure = result.failure
      ? `${failed} The automatic rollback to ${back.id} did not finish: ${result.failure}`
      : `${failed} Production was rolled back from ${d.id} to ${back.id}, which is live.`;
  } catch (err) {
    result.failure = `${failed} The automatic rollback failed too: ${(err as Error).message}`;
  }
}

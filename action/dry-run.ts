import { normaliseBaseUrl } from '../api/client/http.ts';
import type { RunContext } from './context.ts';
import { deploymentBody } from './deploy-request.ts';
import { environmentFor } from './github-deployment.ts';
import { healthUrl } from './health-check.ts';
import { bodyFingerprint, idempotencyKey } from './idempotency.ts';
import type { Inputs } from './inputs.ts';

/** Sent as `User-Agent` with every request to Slipway. */
export const USER_AGENT = 'slipway-action/1';

interface Planned {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  key?: string | undefined;
  body?: object;
  accept?: string;
  why?: string;
}

/**
 * What the step would send, request by request, with the token masked: `dry-run: true` prints
 * this and sends nothing, so ids the service would answer (the project's id when it is given by
 * name, the new deployment's) appear as placeholders.
 */
export function dryRunPlan(inputs: Inputs, ctx: RunContext): string[] {
  const root = normaliseBaseUrl(inputs.apiUrl);
  const byId = inputs.project.startsWith('prj_');
  const projectId = byId ? inputs.project : `<id of project "${inputs.project}">`;
  const plan: Planned[] = [
    byId
      ? { method: 'GET', path: `/v1/projects/${projectId}` }
      : {
          method: 'GET',
          path: '/v1/projects',
          query: { org: inputs.organization, limit: 100, page: 1 },
          why: `find the project named "${inputs.project}" (and the next pages until found)`,
        },
  ];
  const created = '<id of the new deployment>';
  let waitFor: string | null = null;
  let production = false;

  if (inputs.command === 'deploy') {
    const body = deploymentBody(inputs, ctx);
    plan.push({
      method: 'POST',
      path: `/v1/projects/${projectId}/deployments`,
      key: idempotencyKey(ctx.run, 'deploy', inputs.project, bodyFingerprint(body)),
      body,
    });
    waitFor = created;
    production = body.target !== 'preview';
  } else if (inputs.command === 'promote') {
    const commit = inputs.commit ?? ctx.commit;
    let id = inputs.deploymentId;
    if (id) {
      plan.push({ method: 'GET', path: `/v1/deployments/${id}` });
    } else {
      plan.push({
        method: 'GET',
        path: `/v1/projects/${projectId}/deployments`,
        query: { commitHash: commit ?? '<missing: set commit>', status: 'live', limit: 20 },
        why: 'find the latest live preview of the commit',
      });
      id = `<id of the latest live preview of ${commit?.slice(0, 7) ?? 'the commit'}>`;
    }
    plan.push({
      method: 'POST',
      path: `/v1/deployments/${id}/promote`,
      key: idempotencyKey(ctx.run, 'promote', inputs.project, id),
    });
    plan.push({ method: 'GET', path: `/v1/projects/${projectId}`, why: 'read the production URL' });
    production = true;
  } else {
    const from = inputs.deploymentId ?? '<id of the current production deployment>';
    plan.push({
      method: 'POST',
      path: `/v1/deployments/${from}/rollback`,
      key: idempotencyKey(ctx.run, 'rollback', inputs.project, inputs.deploymentId),
    });
    waitFor = created;
  }

  if (waitFor && inputs.wait) {
    plan.push(
      {
        method: 'GET',
        path: `/v1/deployments/${waitFor}/logs`,
        query: { tail: 10_000, follow: true },
        accept: 'text/event-stream',
        why: `follow the build log until the deployment is live or failed, for at most ${inputs.timeoutMs / 1000} s`,
      },
      { method: 'GET', path: `/v1/deployments/${waitFor}`, why: 'read the final state' },
    );
  }

  const lines = ['Dry run: nothing is sent to Slipway or GitHub. The step would send:', ''];
  for (const p of plan) lines.push(...renderRequest(root, p), '');
  if (inputs.healthCheckPath && production) {
    lines.push(
      `Once a production deployment is live: GET ${healthUrl('<deployment URL>', inputs.healthCheckPath)} (health check)` +
        (inputs.rollbackOnFailure
          ? '; if it fails, POST /v1/deployments/<that deployment>/rollback and wait for it.'
          : '.'),
    );
  }
  lines.push(...githubPlan(inputs, ctx));
  return lines;
}

function renderRequest(root: string, p: Planned): string[] {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(p.query ?? {})) if (v !== undefined) params.append(k, String(v));
  const qs = params.toString();
  const lines = [`${p.method} ${root}${p.path}${qs ? `?${qs}` : ''}${p.why ? `    (${p.why})` : ''}`];
  lines.push(
    `  Accept: ${p.accept ?? 'application/json'}`,
    `  User-Agent: ${USER_AGENT}`,
    '  Authorization: Bearer ***',
  );
  if (p.method === 'POST') {
    if (p.body) lines.push('  Content-Type: application/json');
    lines.push(`  Idempotency-Key: ${p.key ?? '<a random UUID: not in a workflow run>'}`);
    if (p.body) lines.push(`  ${JSON.stringify(p.body)}`);
  }
  return lines;
}

function githubPlan(inputs: Inputs, ctx: RunContext): string[] {
  if (!ctx.repo || !inputs.githubToken) return [];
  const repo = `/repos/${ctx.repo.owner}/${ctx.repo.repo}`;
  const lines: string[] = [];
  if (inputs.githubDeployment) {
    const target =
      inputs.command === 'deploy' &&
      (inputs.target === 'preview' || (inputs.target === 'auto' && ctx.pullRequest))
        ? 'preview'
        : 'production';
    const env = environmentFor(target, ctx.pullRequest?.number ?? null, inputs.branch ?? ctx.branch);
    lines.push(
      `GitHub: POST ${ctx.apiUrl}${repo}/deployments (environment "${env.name}"), then POST .../deployments/<id>/statuses: in_progress, then success or failure.`,
    );
  }
  if (inputs.comment && ctx.pullRequest) {
    lines.push(
      `GitHub: GET ${ctx.apiUrl}${repo}/issues/${ctx.pullRequest.number}/comments, then POST or PATCH the comment marked <!-- slipway:action:${projectIdHint(inputs)} -->.`,
    );
  }
  return lines;
}

const projectIdHint = (inputs: Inputs) =>
  inputs.project.startsWith('prj_') ? inputs.project : `<id of project "${inputs.project}">`;

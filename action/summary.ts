import type { RunContext } from './context.ts';
import { cell, cellDuration, fenced, link, shortCommit, statusLabel, table } from './render.ts';
import type { StepResult } from './step.ts';

/**
 * The job summary: one table row per deployment the step touched (project, target, commit,
 * status, URL, build and deploy durations), then the production URL, how long the step waited,
 * the health check and, when the step failed, why.
 */
export function renderSummary(result: StepResult, ctx: RunContext): string {
  const { project } = result;
  const rows = result.history.map(({ action, deployment: d }, i) => [
    cell(project.name),
    action,
    d.target,
    shortCommit(d.commitHash),
    // Only the last deployment can have been cut short by the time limit.
    statusLabel(d.status, result.timedOut && i === result.history.length - 1),
    link(d.url),
    cellDuration(d.buildDurationMs),
    cellDuration(d.deployDurationMs),
    d.dashboardUrl ? `[\`${d.id}\`](${d.dashboardUrl})` : `\`${d.id}\``,
  ]);
  const lines = [`### Slipway ${result.command}: \`${project.name}\``, ''];
  if (rows.length) {
    lines.push(
      table(['Project', 'Step', 'Target', 'Commit', 'Status', 'URL', 'Build', 'Deploy', 'Deployment'], rows),
      '',
    );
  }
  const facts = [`Production URL: ${link(result.productionUrl)}`];
  const branchUrl = result.deployment?.branchUrl;
  if (branchUrl)
    facts.push(
      `Branch URL: ${link(branchUrl)} (the newest live preview of \`${cell(result.deployment!.branch)}\`)`,
    );
  if (result.waitedMs !== null) facts.push(`Waited: ${cellDuration(result.waitedMs)}`);
  if (result.healthCheck) {
    const hc = result.healthCheck;
    facts.push(`Health check: ${hc.ok ? '✅' : '❌'} \`GET ${hc.url}\` answered ${cell(hc.detail)}`);
  }
  if (result.replayed)
    facts.push(
      'An earlier try of this step in this run attempt had already started it: nothing was done twice.',
    );
  if (ctx.logUrl) facts.push(`Workflow run: ${link(ctx.logUrl)}`);
  lines.push(facts.map((f) => `- ${f}`).join('\n'));
  if (result.failure) lines.push('', '**Failed**', '', fenced(result.failure.split('\n')));
  return `${lines.join('\n')}\n`;
}

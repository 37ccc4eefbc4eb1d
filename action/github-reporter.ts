import type { Deployment } from '../api/schemas/deployments.ts';
import type { Project } from '../api/schemas/projects.ts';
import { commentMarker, renderComment, upsertComment } from './comment.ts';
import type { RunContext } from './context.ts';
import type { Octokit, Repo } from './github.ts';
import { createGitHubDeployment, environmentFor, setGitHubDeploymentStatus } from './github-deployment.ts';
import type { Command, Inputs } from './inputs.ts';
import type { Runner } from './runner.ts';
import type { Reporter, StepResult } from './step.ts';

/** A Reporter that tells GitHub nothing. */
export const silentReporter: Reporter = { started: async () => undefined, finished: async () => undefined };

export interface GitHubReporterDeps {
  inputs: Inputs;
  ctx: RunContext;
  runner: Runner;
  octokit: () => Promise<Octokit>;
  now: () => Date;
}

/**
 * Records the step on GitHub: a GitHub Deployment (in_progress once the Slipway deployment
 * exists, then success or failure with the environment's URL and the run's log) and, on
 * pull_request events, one comment per project updated in place. GitHub is told on a best-effort
 * basis: a refused call (a token without `deployments: write` or `pull-requests: write`) is a
 * warning, never the reason a deploy fails.
 */
export function githubReporter(deps: GitHubReporterDeps): Reporter {
  const { inputs, ctx, runner } = deps;
  const repo: Repo | null = ctx.repo;
  const pr = ctx.pullRequest;
  const wantsDeployment = inputs.githubDeployment && repo !== null;
  const wantsComment = inputs.comment && pr !== null && repo !== null;
  if (!inputs.githubToken || (!wantsDeployment && !wantsComment)) return silentReporter;

  let octokit: Promise<Octokit> | undefined;
  const gh = () => (octokit ??= deps.octokit());
  let ghDeploymentId: number | undefined;
  let commentId: number | undefined;

  const bestEffort = async (what: string, permission: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      runner.warning(
        `Could not ${what} on GitHub: ${(err as Error).message}. Does the job grant "${permission}"?`,
      );
    }
  };

  const comment = (command: Command, project: Project, deployment: Deployment, result: StepResult | null) =>
    bestEffort('update the pull request comment', 'pull-requests: write', async () => {
      const body = renderComment({
        command,
        project,
        deployment,
        pending: result === null,
        timedOut: result?.timedOut ?? false,
        productionUrl: result?.productionUrl ?? project.deploymentUrl,
        failure: result?.failure ?? null,
        logUrl: ctx.logUrl,
        at: deps.now(),
      });
      commentId = await upsertComment(
        await gh(),
        repo,
        pr!.number,
        commentMarker(project.id),
        body,
        commentId,
      );
    });

  return {
    async started(deployment, project, command) {
      if (wantsDeployment) {
        await bestEffort('create a deployment', 'deployments: write', async () => {
          const ref = deployment.commitHash ?? ctx.commit;
          if (!ref) throw new Error('the commit is not known yet');
          const env = environmentFor(deployment.target, pr?.number ?? null, deployment.branch);
          const client = await gh();
          ghDeploymentId = await createGitHubDeployment(
            client,
            repo,
            ref,
            env,
            `Slipway ${command} of ${project.name}`,
          );
          await setGitHubDeploymentStatus(client, repo, ghDeploymentId, {
            state: 'in_progress',
            description: `${deployment.id} is ${deployment.status}`,
            logUrl: ctx.logUrl,
          });
        });
      }
      if (wantsComment) await comment(command, project, deployment, null);
    },

    async finished(result) {
      const d = result.deployment;
      if (!d) return;
      const final =
        result.failure !== null || result.timedOut || d.status === 'live' || d.status === 'failed';
      if (wantsDeployment && ghDeploymentId !== undefined && final) {
        const id = ghDeploymentId;
        await bestEffort('update the deployment status', 'deployments: write', async () => {
          const ok = result.failure === null && d.status === 'live';
          await setGitHubDeploymentStatus(await gh(), repo, id, {
            state: ok ? 'success' : 'failure',
            description: ok
              ? `${d.id} is live`
              : (result.failure ?? `${d.id} is ${d.status}`).split('\n')[0]!,
            environmentUrl: d.target === 'production' ? (result.productionUrl ?? d.url) : d.url,
            logUrl: ctx.logUrl,
          });
        });
      }
      if (wantsComment) await comment(result.command, result.project, d, result);
    },
  };
}

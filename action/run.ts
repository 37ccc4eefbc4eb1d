import { createClient, type FetchLike } from '../api/client/index.ts';
import { defaultSleep } from '../api/client/retry.ts';
import { readContext, type RunContext } from './context.ts';
import { deploy } from './deploy.ts';
import { dryRunPlan, USER_AGENT } from './dry-run.ts';
import { explainError } from './explain-error.ts';
import { createOctokit, type Octokit, type OctokitOptions } from './github.ts';
import { githubReporter } from './github-reporter.ts';
import { httpProbe, type Probe } from './http-probe.ts';
import { type Inputs, InputError, rawToken, readInputs } from './inputs.ts';
import { OUTPUT_NAMES, outputsOf } from './outputs.ts';
import { promote } from './promote.ts';
import { resolveProject } from './project.ts';
import { rollback } from './rollback.ts';
import type { Runner } from './runner.ts';
import { emptyResult, type Step, type StepResult } from './step.ts';
import { exchangeForToken } from './oidc.ts';
import { renderSummary } from './summary.ts';

/** The outside world of one run of the action. */
export interface RunDeps {
  env: NodeJS.ProcessEnv;
  runner: Runner;
  fetch?: FetchLike;
  probe?: Probe;
  octokit?: (token: string, baseUrl: string, opts: OctokitOptions) => Promise<Octokit>;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The job's OIDC token for an audience (default @actions/core's getIDToken). */
  getIdToken?: (audience: string) => Promise<string>;
}

const COMMANDS = { deploy, promote, rollback } satisfies Record<Inputs['command'], unknown>;

/**
 * One run of the action: check the inputs (all of them, before anything is sent), then deploy,
 * promote or roll back, and report through outputs, the job summary and GitHub. Never throws:
 * every failure ends as `setFailed`.
 */
export async function run(deps: RunDeps): Promise<void> {
  const { env, runner } = deps;
  // Masked before anything else can print it, even when other inputs are wrong.
  const token = rawToken((name) => runner.getInput(name));
  if (token) runner.setSecret(token);

  let inputs: Inputs;
  let ctx: RunContext;
  try {
    inputs = readInputs((name) => runner.getInput(name));
    if (inputs.githubToken) runner.setSecret(inputs.githubToken);
    if (inputs.protectionBypass) runner.setSecret(inputs.protectionBypass);
    ctx = readContext(env);
  } catch (err) {
    runner.setFailed(err instanceof InputError ? err.message : explainError(err));
    return;
  }

  if (inputs.dryRun) {
    for (const line of dryRunPlan(inputs, ctx)) runner.info(line);
    runner.setOutput('status', 'dry-run');
    return;
  }

  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? defaultSleep;
  let apiToken = inputs.apiToken;
  let project = inputs.project;
  if (!apiToken) {
    try {
      const exchanged = await exchangeForToken(inputs, {
        env,
        fetch: deps.fetch,
        userAgent: USER_AGENT,
        getIdToken: deps.getIdToken,
        sleep,
        log: (m) => runner.info(m),
      });
      runner.setSecret(exchanged.token);
      apiToken = exchanged.token;
      project = exchanged.projectId;
      runner.info(`Exchanged the job's OIDC token for a short-lived token of ${exchanged.projectId}.`);
    } catch (err) {
      runner.setFailed(explainError(err, { oidc: true }));
      return;
    }
  }
  const client = createClient({
    baseUrl: inputs.apiUrl,
    token: apiToken,
    userAgent: USER_AGENT,
    baseUrlName: 'the api-url input',
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const octokit = deps.octokit ?? createOctokit;
  const reporter = githubReporter({
    inputs,
    ctx,
    runner,
    octokit: () => octokit(inputs.githubToken!, ctx.apiUrl, { log: (m) => runner.info(m) }),
    now: () => new Date(now()),
  });
  const step: Step = { inputs, ctx, client, runner, reporter, probe: deps.probe ?? httpProbe, now, sleep };

  let result: StepResult;
  try {
    result = emptyResult(inputs.command, await resolveProject(client, project, inputs.organization));
  } catch (err) {
    runner.setFailed(explainError(err));
    return;
  }
  try {
    await COMMANDS[inputs.command](step, result);
  } catch (err) {
    result.failure = explainError(err);
  }

  const outputs = outputsOf(result);
  for (const name of OUTPUT_NAMES) runner.setOutput(name, outputs[name]);
  await reporter.finished(result);
  try {
    await runner.writeSummary(renderSummary(result, ctx));
  } catch (err) {
    runner.warning(`Could not write the job summary: ${(err as Error).message}`);
  }
  if (result.failure) runner.setFailed(result.failure);
}

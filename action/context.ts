import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The runner's variables the action reads; see GitHub's "Default environment variables". */
export const RunnerEnv = z.object({
  /** Event that started the workflow: push, pull_request, workflow_dispatch... */
  GITHUB_EVENT_NAME: z.string().default(''),
  /** File holding the event's webhook payload. */
  GITHUB_EVENT_PATH: z.string().optional(),
  /** Commit the workflow runs on (on pull_request: the merge commit, not the head). */
  GITHUB_SHA: z.string().optional(),
  /** Ref the workflow runs on: refs/heads/<branch>, refs/tags/<tag>, refs/pull/<n>/merge. */
  GITHUB_REF: z.string().optional(),
  /** owner/repo. */
  GITHUB_REPOSITORY: z
    .string()
    .regex(/^[^/\s]+\/[^/\s]+$/)
    .optional()
    .catch(undefined),
  /** Unique id of the workflow run. */
  GITHUB_RUN_ID: z.string().regex(/^\d+$/).optional().catch(undefined),
  /** 1 on the first run of a workflow run, 2 on its first re-run... */
  GITHUB_RUN_ATTEMPT: z.string().regex(/^\d+$/).default('1').catch('1'),
  /** The job's id in the workflow file. */
  GITHUB_JOB: z.string().default(''),
  /** Where actions/checkout put the repository; relative `directory` inputs start here. */
  GITHUB_WORKSPACE: z.string().optional(),
  /** https://github.com, or a GitHub Enterprise Server's address. */
  GITHUB_SERVER_URL: z.string().default('https://github.com'),
  /** https://api.github.com, or a GitHub Enterprise Server's API root. */
  GITHUB_API_URL: z.string().default('https://api.github.com'),
});

/** The parts of a pull_request (or pull_request_target) payload the action reads. */
const PullRequestPayload = z.object({
  /** The pull request's number. */
  number: z.number().int(),
  pull_request: z.object({
    /** Title, for the comment. */
    title: z.string().optional(),
    head: z.object({
      /** The head branch, in the head repository. */
      ref: z.string(),
      /** The head commit. */
      sha: z.string(),
      /** The head repository; null when a fork was deleted. */
      repo: z.object({ full_name: z.string() }).nullable().optional(),
    }),
    base: z.object({ repo: z.object({ full_name: z.string() }) }),
  }),
});

/** The parts of a push payload the action reads. */
const PushPayload = z.object({
  /** The pushed commit, with its message; null when a branch is deleted. */
  head_commit: z.object({ id: z.string(), message: z.string() }).nullable().optional(),
});

/** The pull request the workflow runs for. */
export interface PullRequest {
  number: number;
  title: string | undefined;
  headRef: string;
  headSha: string;
  /** The head lives in another repository, which the service cannot fetch by branch name. */
  fromFork: boolean;
}

/** Ids of this run that together name one try of one job. */
export interface RunIds {
  runId: string;
  attempt: string;
  job: string;
}

/** Everything the action takes from the workflow run. */
export interface RunContext {
  eventName: string;
  repo: { owner: string; repo: string } | null;
  pullRequest: PullRequest | null;
  /** Branch or ref to deploy by default. */
  branch: string | undefined;
  /** Commit to deploy or promote by default. */
  commit: string | undefined;
  /** The head commit's message, when the payload carries it. */
  message: string | undefined;
  /** Null outside a workflow run (no GITHUB_RUN_ID). */
  run: RunIds | null;
  serverUrl: string;
  apiUrl: string;
  /** Link to this run's log, for GitHub Deployment statuses and the comment. */
  logUrl: string | null;
  /** The checkout's directory (GITHUB_WORKSPACE), else the current one. */
  workspace: string;
}

const PR_EVENTS = new Set(['pull_request', 'pull_request_target']);

/** `refs/heads/main` -> `main`; other refs (tags, pull refs) are deployed as they are. */
export const branchOfRef = (ref: string) => (ref.startsWith('refs/heads/') ? ref.slice(11) : ref);

/** Reads the run's context from the runner's variables and the event payload they point at. */
export function readContext(env: NodeJS.ProcessEnv, readFile = (p: string) => readFileSync(p, 'utf8')) {
  const e = RunnerEnv.parse(env);
  let payload: unknown = {};
  if (e.GITHUB_EVENT_PATH) {
    try {
      payload = JSON.parse(readFile(e.GITHUB_EVENT_PATH));
    } catch (err) {
      throw new Error(`Could not read the event payload at GITHUB_EVENT_PATH: ${(err as Error).message}`);
    }
  }
  return contextFrom(e, payload);
}

/** The context of a run from its parsed variables and event payload. */
export function contextFrom(e: z.infer<typeof RunnerEnv>, payload: unknown): RunContext {
  const [owner, repo] = e.GITHUB_REPOSITORY?.split('/') ?? [];
  const serverUrl = e.GITHUB_SERVER_URL.replace(/\/+$/, '');
  const run = e.GITHUB_RUN_ID
    ? { runId: e.GITHUB_RUN_ID, attempt: e.GITHUB_RUN_ATTEMPT, job: e.GITHUB_JOB }
    : null;
  const base = {
    eventName: e.GITHUB_EVENT_NAME,
    repo: owner && repo ? { owner, repo } : null,
    run,
    serverUrl,
    apiUrl: e.GITHUB_API_URL.replace(/\/+$/, ''),
    workspace: e.GITHUB_WORKSPACE ?? process.cwd(),
    logUrl:
      run && e.GITHUB_REPOSITORY ? `${serverUrl}/${e.GITHUB_REPOSITORY}/actions/runs/${run.runId}` : null,
  };

  if (PR_EVENTS.has(e.GITHUB_EVENT_NAME)) {
    const parsed = PullRequestPayload.safeParse(payload);
    if (!parsed.success) {
      throw new Error(
        `The ${e.GITHUB_EVENT_NAME} event payload has no pull request: ${parsed.error.message}`,
      );
    }
    const pr = parsed.data.pull_request;
    const fromFork = pr.head.repo?.full_name !== pr.base.repo.full_name;
    const pullRequest: PullRequest = {
      number: parsed.data.number,
      title: pr.title,
      headRef: pr.head.ref,
      headSha: pr.head.sha,
      fromFork,
    };
    return {
      ...base,
      pullRequest,
      // A fork's branch does not exist in the project's repository; GitHub's pull ref does.
      branch: fromFork ? `refs/pull/${pullRequest.number}/head` : pr.head.ref,
      // GITHUB_SHA is a merge commit GitHub made; the head is what the author pushed.
      commit: pr.head.sha,
      message: undefined,
    };
  }

  const push = PushPayload.safeParse(payload);
  const head = push.success ? push.data.head_commit : undefined;
  return {
    ...base,
    pullRequest: null,
    branch: e.GITHUB_REF ? branchOfRef(e.GITHUB_REF) : undefined,
    commit: e.GITHUB_SHA || undefined,
    message: head && head.id === e.GITHUB_SHA ? head.message : undefined,
  };
}

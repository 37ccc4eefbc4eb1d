import { z } from 'zod';
import { id, Slug } from '../api/schemas/common.ts';
import { CommitHash } from '../api/schemas/deployments.ts';
import { BranchName } from '../api/schemas/projects.ts';
import { parseDuration } from './duration.ts';

/** What the step does. */
export const Command = z.enum(['deploy', 'promote', 'rollback'], {
  error: 'must be one of deploy, promote, rollback',
});
export type Command = z.infer<typeof Command>;

// Booleans are read the way @actions/core's getBooleanInput reads them (YAML 1.2 core schema).
const TRUE = ['true', 'True', 'TRUE'];
const FALSE = ['false', 'False', 'FALSE'];
const bool = (dflt: boolean) =>
  z
    .enum([...TRUE, ...FALSE] as [string, ...string[]], { error: 'must be true or false' })
    .transform((v) => TRUE.includes(v))
    .default(dflt);

/** The inputs as action.yml names them; an empty input counts as not given. */
export const RawInputs = z.strictObject({
  /** deploy (default), promote or rollback. */
  command: Command.default('deploy'),
  /** Root URL of the Slipway API, e.g. https://slipway.example.com. */
  'api-url': z.string({ error: 'is required' }).refine((v) => {
    try {
      return ['http:', 'https:'].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, 'must be an http or https URL such as https://slipway.example.com'),
  /** API token (`slw_...`); masked in the log. Without it, the job's OIDC token is exchanged for one. */
  'api-token': z.string().optional(),
  /** Audience of the OIDC token asked for when there is no api-token; default the api-url. */
  'oidc-audience': z.string().min(1).optional(),
  /** Project id (`prj_...`) or name. */
  project: z.union([id('prj'), Slug], { error: 'must be a project id (prj_...) or a project name' }),
  /** Organization id or name, to find the project by name. */
  organization: z.string().optional(),
  /** Branch or ref to deploy; default from the event. */
  branch: z
    .union([BranchName, z.string().regex(/^refs\/[A-Za-z0-9._/-]+$/)], {
      error: 'must be a valid git ref name',
    })
    .optional(),
  /** Commit to deploy or promote; default from the event. */
  commit: CommitHash.optional(),
  /** Message recorded with the deployment; default the head commit's message. */
  message: z.string().max(1000, 'must be at most 1000 characters').optional(),
  /** auto (default), production or preview. */
  target: z
    .enum(['auto', 'production', 'preview'], { error: 'must be one of auto, production, preview' })
    .default('auto'),
  /** git (default): Slipway clones the repository; workspace: upload the checkout; prebuilt: upload built output. */
  source: z
    .enum(['git', 'workspace', 'prebuilt'], { error: 'must be one of git, workspace, prebuilt' })
    .default('git'),
  /** source: workspace: the directory to upload (default the checkout's root). */
  directory: z.string().default('.'),
  /** source: prebuilt: the built output to upload and serve as it is. */
  'output-directory': z.string().optional(),
  /** Deployment to promote or roll back from. */
  'deployment-id': id('dpl').optional(),
  /** rollback: the earlier production deployment to roll back to (default: the one live before). */
  to: id('dpl').optional(),
  /** Wait until the deployment is live or failed (default true). */
  wait: bool(true),
  /** How long to wait: `15m` (default), `90s`, `1h30m`. */
  timeout: z
    .string()
    .default('15m')
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === null) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a duration such as 15m, 90s or 1h30m (at most 24h), got "${v}"`,
        });
        return z.NEVER;
      }
      return ms;
    }),
  /** Print the build log into the job log while waiting (default true). */
  'stream-logs': bool(true),
  /** Path to probe once a production deployment is live, e.g. /healthz. */
  'health-check-path': z.string().startsWith('/', 'must start with /').max(2000).optional(),
  /** Roll production back when the health check fails (default false). */
  'rollback-on-failure': bool(false),
  /** The project's preview protection bypass secret, sent with the health check (docs/protection.md). */
  'protection-bypass': z.string().optional(),
  /** Token for GitHub's API (comments, deployments); the workflow's token by default. */
  'github-token': z.string().optional(),
  /** Record a GitHub Deployment with its statuses (default false). */
  'github-deployment': bool(false),
  /** On pull_request events, keep one comment on the PR up to date (default true). */
  comment: bool(true),
  /** Print what would be sent and send nothing (default false). */
  'dry-run': bool(false),
});

/** Every input name, in action.yml's order. */
export const INPUT_NAMES = Object.keys(RawInputs.shape) as (keyof typeof RawInputs.shape)[];

/** The validated inputs the rest of the action works with. */
export interface Inputs {
  command: Command;
  apiUrl: string;
  /** Undefined: exchange the job's OIDC token (permissions: id-token: write). */
  apiToken: string | undefined;
  oidcAudience: string;
  project: string;
  organization: string | undefined;
  branch: string | undefined;
  commit: string | undefined;
  message: string | undefined;
  target: 'auto' | 'production' | 'preview';
  source: 'git' | 'workspace' | 'prebuilt';
  directory: string;
  outputDirectory: string | undefined;
  deploymentId: string | undefined;
  /** rollback: the deployment to go back to. */
  to: string | undefined;
  wait: boolean;
  timeoutMs: number;
  streamLogs: boolean;
  healthCheckPath: string | undefined;
  rollbackOnFailure: boolean;
  /** Sent as x-slipway-protection-bypass with the health check, when the project protects its URLs. */
  protectionBypass?: string | undefined;
  githubToken: string | undefined;
  githubDeployment: boolean;
  comment: boolean;
  dryRun: boolean;
}

/** Invalid inputs: the message names each input and what is wrong with it. */
export class InputError extends Error {
  constructor(readonly problems: { input: string; message: string }[]) {
    super(problems.map((p) => `Input "${p.input}" ${p.message}`).join('\n'));
    this.name = 'InputError';
  }
}

/** Reads an input by its action.yml name, trimmed, empty when not given (Runner.getInput). */
export type GetInput = (name: string) => string;

/** The token, as soon as it can be read, so that it can be masked before anything is printed. */
export const rawToken = (getInput: GetInput) => getInput('api-token').trim() || undefined;

/**
 * Reads and checks every input at once; throws InputError naming each bad input before anything
 * is sent.
 */
export function readInputs(getInput: GetInput): Inputs {
  const raw: Record<string, string> = {};
  for (const name of INPUT_NAMES) {
    const value = getInput(name).trim();
    if (value) raw[name] = value;
  }
  const parsed = RawInputs.safeParse(raw);
  if (!parsed.success) {
    throw new InputError(
      parsed.error.issues.map((i) => ({
        input: String(i.path[0] ?? 'inputs'),
        // A required input that was not given fails whatever its type check says.
        message: raw[String(i.path[0])] === undefined ? 'is required' : i.message,
      })),
    );
  }
  const p = parsed.data;
  const inputs: Inputs = {
    command: p.command,
    apiUrl: p['api-url'],
    apiToken: p['api-token'],
    oidcAudience: p['oidc-audience'] ?? p['api-url'].replace(/\/+$/, ''),
    project: p.project,
    organization: p.organization,
    branch: p.branch,
    commit: p.commit,
    message: p.message,
    target: p.target,
    source: p.source,
    directory: p.directory,
    outputDirectory: p['output-directory'],
    deploymentId: p['deployment-id'],
    to: p.to,
    wait: p.wait,
    timeoutMs: p.timeout,
    streamLogs: p['stream-logs'],
    healthCheckPath: p['health-check-path'],
    rollbackOnFailure: p['rollback-on-failure'],
    protectionBypass: p['protection-bypass'],
    githubToken: p['github-token'],
    githubDeployment: p['github-deployment'],
    comment: p.comment,
    dryRun: p['dry-run'],
  };
  const problems = crossChecks(inputs);
  if (problems.length) throw new InputError(problems);
  return inputs;
}

/** Combinations that cannot do what the user meant. */
function crossChecks(i: Inputs): { input: string; message: string }[] {
  const problems: { input: string; message: string }[] = [];
  if (i.deploymentId && i.command === 'deploy') {
    problems.push({ input: 'deployment-id', message: 'is for the promote and rollback commands' });
  }
  if (i.to && i.command !== 'rollback') {
    problems.push({ input: 'to', message: 'is for the rollback command (the deployment to go back to)' });
  }
  if (i.source !== 'git' && i.command !== 'deploy') {
    problems.push({
      input: 'source',
      message: `is for the deploy command (${i.command} uses a deployment as it is)`,
    });
  }
  if (i.source === 'prebuilt' && !i.outputDirectory) {
    problems.push({
      input: 'output-directory',
      message: 'is required with source: prebuilt (the directory your build wrote)',
    });
  }
  if (i.outputDirectory && i.source !== 'prebuilt') {
    problems.push({ input: 'output-directory', message: 'is for source: prebuilt' });
  }
  if (i.directory !== '.' && i.source !== 'workspace') {
    problems.push({ input: 'directory', message: 'is for source: workspace' });
  }
  if (i.healthCheckPath && !i.wait) {
    problems.push({ input: 'health-check-path', message: 'needs wait: true (the check runs once live)' });
  }
  if (i.rollbackOnFailure && !i.healthCheckPath) {
    problems.push({
      input: 'rollback-on-failure',
      message: 'needs health-check-path to know what failing is',
    });
  }
  return problems;
}

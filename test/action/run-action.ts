import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE } from './bundle.ts';

export interface ActionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the step wrote to GITHUB_OUTPUT. */
  outputs: Record<string, string>;
  /** What the step wrote to GITHUB_STEP_SUMMARY. */
  summary: string;
  /** The `::error::` message, decoded as the runner decodes it. */
  error: string | null;
}

export interface RunOptions {
  /** Inputs by their action.yml names (`api-url`): set as the runner does, `INPUT_API-URL`. */
  inputs: Record<string, string>;
  /** The event: its name and its webhook payload (written to GITHUB_EVENT_PATH). */
  event?: { name: string; payload: unknown };
  /** More GITHUB_* variables, or overrides (GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT...). */
  env?: Record<string, string>;
}

/** The repository the workflow runs in. */
export const REPOSITORY = 'octo-org/site';

/** One workflow command, as the runner reads it from the step's stdout. */
export interface WorkflowCommand {
  command: string;
  properties: Record<string, string>;
  data: string;
}

const unescapeData = (s: string) => s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%');
const unescapeProperty = (s: string) =>
  s
    .replace(/%0D/g, '\r')
    .replace(/%0A/g, '\n')
    .replace(/%3A/g, ':')
    .replace(/%2C/g, ',')
    .replace(/%25/g, '%');

/**
 * The workflow commands in a step's stdout, read the way GitHub's runner reads them
 * (actions/runner, ActionCommand.TryParseV2): line by line (CR, LF or CRLF ends a line), a line
 * starting with `::` up to the next `::` names the command and its `key=value,...` properties,
 * the rest is the data; then `%0D`, `%0A` and `%25` are decoded in that order (and `%3A`, `%2C`
 * in properties).
 */
export function parseCommands(stdout: string): WorkflowCommand[] {
  const commands: WorkflowCommand[] = [];
  for (const raw of stdout.split(/\r\n|\r|\n/)) {
    const line = raw.trimStart();
    if (!line.startsWith('::')) continue;
    const end = line.indexOf('::', 2);
    if (end < 0) continue;
    const info = line.slice(2, end);
    const space = info.indexOf(' ');
    const properties: Record<string, string> = {};
    if (space >= 0) {
      for (const pair of info.slice(space + 1).split(',')) {
        const eq = pair.indexOf('=');
        if (eq > 0) properties[pair.slice(0, eq)] = unescapeProperty(pair.slice(eq + 1));
      }
    }
    commands.push({
      command: space >= 0 ? info.slice(0, space) : info,
      properties,
      data: unescapeData(line.slice(end + 2)),
    });
  }
  return commands;
}

/** GITHUB_OUTPUT holds `name<<delimiter`, the value's lines, then the delimiter. */
export function parseOutputFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<]+)<<(.+)$/.exec(lines[i]!);
    if (!m) continue;
    const end = lines.indexOf(m[2]!, i + 1);
    out[m[1]!] = lines.slice(i + 1, end).join('\n');
    i = end;
  }
  return out;
}

/**
 * Runs the bundled action (dist/action/index.js) in a child process the way the runner does:
 * inputs as INPUT_* variables, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, the event payload
 * in GITHUB_EVENT_PATH, and nothing of the test's own environment but PATH.
 */
export async function runAction(opts: RunOptions): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-action-run-'));
  try {
    const outputFile = join(dir, 'output');
    const summaryFile = join(dir, 'summary');
    const eventFile = join(dir, 'event.json');
    writeFileSync(outputFile, '');
    writeFileSync(summaryFile, '');
    writeFileSync(eventFile, JSON.stringify(opts.event?.payload ?? {}));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      RUNNER_TEMP: dir,
      GITHUB_ACTIONS: 'true',
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      GITHUB_EVENT_PATH: eventFile,
      GITHUB_EVENT_NAME: opts.event?.name ?? 'push',
      GITHUB_REPOSITORY: REPOSITORY,
      GITHUB_RUN_ID: String(randomInt(1, 2 ** 40)),
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_JOB: 'deploy',
      GITHUB_SERVER_URL: 'https://github.example',
      ...opts.env,
    };
    for (const [name, value] of Object.entries(opts.inputs)) env[`INPUT_${name.toUpperCase()}`] = value;
    const child = spawn(process.execPath, [BUNDLE], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    const error = parseCommands(stdout).find((c) => c.command === 'error')?.data;
    return {
      code,
      stdout,
      stderr,
      outputs: parseOutputFile(readFileSync(outputFile, 'utf8')),
      summary: readFileSync(summaryFile, 'utf8'),
      error: error ?? null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Example = { name: string; examples: Record<string, any>[] };
const examples = createRequire(import.meta.url)(
  '@octokit/webhooks-examples/api.github.com/index.json',
) as Example[];

function example(event: string, pick: (e: Record<string, any>) => boolean): Record<string, any> {
  const found = examples.find((e) => e.name === event)?.examples.find(pick);
  if (!found) throw new Error(`no ${event} example`);
  return structuredClone(found);
}

/** A real push payload from @octokit/webhooks-examples, moved to our repository and commit. */
export function pushEvent(opts: { sha: string; branch: string; message: string }) {
  const payload = example('push', (e) => e.head_commit !== null && e.ref.startsWith('refs/heads/'));
  payload.ref = `refs/heads/${opts.branch}`;
  payload.after = opts.sha;
  payload.head_commit.id = opts.sha;
  payload.head_commit.message = opts.message;
  payload.repository.full_name = REPOSITORY;
  return {
    event: { name: 'push', payload },
    env: { GITHUB_SHA: opts.sha, GITHUB_REF: `refs/heads/${opts.branch}` },
  };
}

/** A real pull_request payload from @octokit/webhooks-examples, for a PR of our repository. */
export function pullRequestEvent(opts: {
  number: number;
  headRef: string;
  headSha: string;
  action?: string;
}) {
  const action = opts.action ?? 'opened';
  const payload = example('pull_request', (e) => e.action === action);
  payload.number = opts.number;
  payload.pull_request.number = opts.number;
  payload.pull_request.head.ref = opts.headRef;
  payload.pull_request.head.sha = opts.headSha;
  payload.pull_request.head.repo.full_name = REPOSITORY;
  payload.pull_request.base.repo.full_name = REPOSITORY;
  payload.repository.full_name = REPOSITORY;
  if (action === 'closed') payload.pull_request.merged = true;
  return {
    event: { name: 'pull_request', payload },
    // On pull_request events GitHub runs on a merge commit of its own, never the head.
    env: { GITHUB_SHA: 'f'.repeat(40), GITHUB_REF: `refs/pull/${opts.number}/merge` },
  };
}

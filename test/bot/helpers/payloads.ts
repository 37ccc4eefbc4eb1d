import { createRequire } from 'node:module';

interface Example {
  name: string;
  examples: any[];
}
const examples = createRequire(import.meta.url)(
  '@octokit/webhooks-examples/api.github.com/index.json',
) as Example[];

/**
 * Real GitHub webhook payloads from @octokit/webhooks-examples, with the fields a scenario needs
 * set. All of them are about the example repository Codertocat/Hello-World and installation 1.
 */
export const OWNER = 'Codertocat';
export const REPO = 'Hello-World';
export const INSTALLATION_ID = 1;

function example(name: string, action: string): any {
  const def = examples.find((e) => e.name === name);
  const found = def?.examples.find((x) => x.action === action && x.installation);
  const any = found ?? def?.examples.find((x) => x.action === action);
  if (!any) throw new Error(`no example of ${name}.${action}`);
  return structuredClone(any);
}

const repository = () => example('pull_request', 'opened').repository;

export interface PrSpec {
  number: number;
  headSha: string;
  headRef: string;
  baseRef?: string;
  title?: string;
  draft?: boolean;
  labels?: string[];
  /** From a fork (`forker/Hello-World`). */
  fork?: boolean;
  merged?: boolean;
  mergeSha?: string | null;
  state?: 'open' | 'closed';
}

/** A pull request object as GitHub sends it (and answers `GET /pulls/{n}` with). */
export function pullRequest(spec: PrSpec): any {
  const pr = example('pull_request', 'opened').pull_request;
  pr.number = spec.number;
  pr.title = spec.title ?? `Change number ${spec.number}`;
  pr.html_url = `https://github.com/${OWNER}/${REPO}/pull/${spec.number}`;
  pr.draft = spec.draft ?? false;
  pr.state = spec.state ?? 'open';
  pr.merged = spec.merged ?? false;
  pr.merge_commit_sha = spec.mergeSha ?? null;
  pr.labels = (spec.labels ?? []).map((name, i) => ({ ...pr.labels[0], id: 1000 + i, name }));
  pr.head.sha = spec.headSha;
  pr.head.ref = spec.headRef;
  pr.base.ref = spec.baseRef ?? 'main';
  if (spec.fork) {
    pr.head.repo = {
      ...pr.head.repo,
      id: 999,
      full_name: `forker/${REPO}`,
      owner: { ...pr.head.repo.owner, login: 'forker' },
    };
    pr.head.label = `forker:${spec.headRef}`;
  }
  return pr;
}

export function pullRequestEvent(
  action: string,
  spec: PrSpec,
  extra: { before?: string; sender?: string } = {},
): any {
  const e = example('pull_request', action === 'opened' ? 'opened' : 'synchronize');
  e.action = action;
  e.number = spec.number;
  e.pull_request = pullRequest(spec);
  e.repository = repository();
  e.installation = { id: INSTALLATION_ID, node_id: e.installation?.node_id ?? 'x' };
  if (extra.before) {
    e.before = extra.before;
    e.after = spec.headSha;
  }
  if (extra.sender) e.sender = { ...e.sender, login: extra.sender };
  return e;
}

/**
 * GitHub's real `pull_request.closed` delivery (the example's own fields, sender and all), set to
 * this pull request merged: what a merge sends.
 */
export function mergedEvent(spec: PrSpec & { mergeSha: string }): any {
  const e = example('pull_request', 'closed');
  e.number = spec.number;
  e.pull_request = pullRequest({ ...spec, state: 'closed', merged: true });
  e.pull_request.merged_at = e.pull_request.closed_at = new Date().toISOString();
  e.repository = repository();
  e.installation = { id: INSTALLATION_ID, node_id: e.installation?.node_id ?? 'x' };
  return e;
}

export function issueCommentEvent(spec: {
  number: number;
  body: string;
  login: string;
  onPull?: boolean;
  bot?: boolean;
}): any {
  const e = example('issue_comment', 'created');
  e.issue.number = spec.number;
  if (spec.onPull ?? true) {
    e.issue.pull_request = {
      url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/${spec.number}`,
      html_url: `https://github.com/${OWNER}/${REPO}/pull/${spec.number}`,
      diff_url: `https://github.com/${OWNER}/${REPO}/pull/${spec.number}.diff`,
      patch_url: `https://github.com/${OWNER}/${REPO}/pull/${spec.number}.patch`,
      merged_at: null,
    };
  } else {
    delete e.issue.pull_request;
  }
  e.comment.id = Math.floor(Math.random() * 1e9);
  e.comment.body = spec.body;
  e.comment.user = { ...e.comment.user, login: spec.login, type: spec.bot ? 'Bot' : 'User' };
  e.sender = { ...e.sender, login: spec.login, type: spec.bot ? 'Bot' : 'User' };
  e.repository = repository();
  e.installation = { id: INSTALLATION_ID, node_id: 'x' };
  return e;
}

export function checkRunEvent(spec: {
  action: 'requested_action' | 'rerequested';
  run: { id: number; head_sha: string; external_id?: string; name: string };
  identifier?: string;
  login: string;
}): any {
  const e = example('check_run', spec.action);
  e.action = spec.action;
  e.check_run = { ...e.check_run, ...spec.run, pull_requests: [] };
  if (spec.action === 'requested_action') e.requested_action = { identifier: spec.identifier };
  else delete e.requested_action;
  e.repository = repository();
  delete e.organization;
  e.sender = { ...e.sender, login: spec.login, type: 'User' };
  e.installation = { id: INSTALLATION_ID, node_id: 'x' };
  return e;
}

/**
 * The bot keeps no database: what it needs to find a deployment's pull request again when the
 * service reports on it travels in the deployment's `message`, which the service stores and
 * returns. The message reads naturally in deployment lists and parses back exactly.
 */
export interface DeploymentTag {
  /** `preview` of a pull request's head, or `merge`: the production deployment after a merge. */
  kind: 'preview' | 'merge';
  owner: string;
  repo: string;
  pull: number;
  /** The commit the bot reports on: the head commit (preview) or the merge commit (merge). */
  sha: string;
}

const KINDS = { preview: 'Preview', merge: 'Merge' } as const;
const PATTERN = /^(Preview|Merge) of ([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)#(\d+) \(([0-9a-f]{40})\)/;

/** `Preview of octo/site#12 (<sha>)`. */
export function formatTag(tag: DeploymentTag): string {
  return `${KINDS[tag.kind]} of ${tag.owner}/${tag.repo}#${tag.pull} (${tag.sha})`;
}

/** The tag of a deployment the bot started, or null for any other deployment. */
export function parseTag(message: string | null): DeploymentTag | null {
  const m = message ? PATTERN.exec(message) : null;
  if (!m) return null;
  return {
    kind: m[1] === 'Preview' ? 'preview' : 'merge',
    owner: m[2]!,
    repo: m[3]!,
    pull: Number(m[4]),
    sha: m[5]!,
  };
}

/** The lock key of a pull request. */
export const pullKey = (t: { owner: string; repo: string; pull: number }) =>
  `${t.owner}/${t.repo}#${t.pull}`.toLowerCase();

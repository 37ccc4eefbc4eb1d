import type { SlipwayConfig } from '../config.ts';
import { matchesAny } from '../lib/glob.ts';
import { isFork, type PullRequest } from '../github/payloads.ts';

/** What to do with a pull request's new head. */
export type Decision = { kind: 'build' } | { kind: 'skip'; reason: string } | { kind: 'approve' };

/** Look-ups a decision may need; each is called at most once, and only when it matters. */
export interface DecisionLookups {
  changedFiles(): Promise<string[]>;
  headCommitMessage(): Promise<string>;
}

const SKIP_MARKER = /\[(skip ci|ci skip|skip preview|preview skip)\]/i;

const list = (items: string[]) => items.map((i) => `\`${i}\``).join(', ');

/**
 * Whether a pull request's head gets a preview. Cheap checks come first, so a skipped pull
 * request costs no GitHub calls; every skip has a reason the check shows.
 */
export async function decidePreview(
  config: SlipwayConfig,
  pr: PullRequest,
  lookups: DecisionLookups,
): Promise<Decision> {
  const { previews } = config;
  const skip = (reason: string): Decision => ({ kind: 'skip', reason });
  if (!previews.enabled) {
    return skip(
      'Previews are turned off for this repository (`previews.enabled: false`). Comment `/preview` to build one.',
    );
  }
  if (pr.draft && !previews.drafts) {
    return skip(
      'This pull request is a draft: its preview starts when it is marked ready for review (or set `previews.drafts: true`). Comment `/preview` to build one now.',
    );
  }
  const label = pr.labels.find((l) => previews.skipLabels.includes(l.name));
  if (label) return skip(`The label \`${label.name}\` skips previews (\`previews.skipLabels\`).`);
  const inTitle = SKIP_MARKER.exec(pr.title);
  if (inTitle) return skip(`The pull request's title contains \`${inTitle[0]}\`.`);
  const fork = isFork(pr);
  if (fork && previews.forks === 'never') {
    return skip('Previews of pull requests from forks are turned off (`previews.forks: never`).');
  }
  if (previews.paths.length > 0) {
    const files = await lookups.changedFiles();
    if (!files.some((f) => matchesAny(f, previews.paths))) {
      return skip(`No changed file matches \`previews.paths\` (${list(previews.paths)}).`);
    }
  }
  const inCommit = SKIP_MARKER.exec(await lookups.headCommitMessage());
  if (inCommit) return skip(`The head commit's message contains \`${inCommit[0]}\`.`);
  if (fork && previews.forks === 'approve') return { kind: 'approve' };
  return { kind: 'build' };
}

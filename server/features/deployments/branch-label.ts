import { createHash } from 'node:crypto';

/** DNS's limit on one label. */
const MAX_LABEL = 63;
/** Characters of the branch name's hash appended when the plain label cannot be used. */
const HASH_LENGTH = 6;

/**
 * A branch name as a piece of a host label: accents dropped (`é` -> `e`), lowercase, every run
 * of other characters than `a-z0-9` one `-`, no `-` at either end. May be empty (`日本`).
 */
export function branchSlug(branch: string): string {
  return branch
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The first characters of the SHA-256 of the real branch name, in hex. */
export function branchHash(branch: string): string {
  return createHash('sha256').update(branch, 'utf8').digest('hex').slice(0, HASH_LENGTH);
}

/** `base` cut so that `-<suffix>` fits in one label, without a `-` before the suffix's. */
function withSuffix(base: string, suffix: string): string {
  return `${base.slice(0, MAX_LABEL - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
}

/**
 * The labels a branch's URL may take, best first (docs/edge.md#branch-urls):
 * `<project>-git-<slug>` when it fits in 63 characters and the slug is not empty, then the same
 * cut short with `-<hash of the branch name>`, which tells apart branches whose slugs are equal
 * (`feature/A`, `feature-a`). The caller takes the first one free, else `withRandom`.
 */
export function branchLabelCandidates(projectName: string, branch: string): string[] {
  const slug = branchSlug(branch);
  const base = slug ? `${projectName}-git-${slug}` : `${projectName}-git`;
  const hashed = withSuffix(base, branchHash(branch));
  return slug && base.length <= MAX_LABEL ? [base, hashed] : [hashed];
}

/** The last resort when every candidate is taken: the hashed label with `random` after it. */
export function withRandom(projectName: string, branch: string, random: string): string {
  const slug = branchSlug(branch);
  const base = slug ? `${projectName}-git-${slug}` : `${projectName}-git`;
  return withSuffix(base, `${branchHash(branch)}-${random}`);
}

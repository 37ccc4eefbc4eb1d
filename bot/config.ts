import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';

/** Where the bot reads its per-repository settings, always from the default branch. */
export const CONFIG_PATH = '.github/slipway.yml';

/** Who may get a preview built from a fork's pull request. */
export const ForkPolicy = z.enum(['approve', 'never', 'always']);
export type ForkPolicy = z.infer<typeof ForkPolicy>;

/** When the bot keeps its one comment on a pull request. */
export const CommentMode = z.enum(['always', 'failures', 'off']);
export type CommentMode = z.infer<typeof CommentMode>;

const Name = z.string().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters');

export const PreviewsConfig = z.strictObject({
  /** Build a preview for every pull request (default true); `/preview` still works when false. */
  enabled: z.boolean().default(true),
  /** Build draft pull requests too (default false: they wait for "ready for review"). */
  drafts: z.boolean().default(false),
  /** Pull requests from forks: `approve` (default) waits for a maintainer, `never`, or `always`. */
  forks: ForkPolicy.default('approve'),
  /** Build only when a changed file matches one of these globs (default: any change). */
  paths: z.array(Name).default([]),
  /** Labels that skip the preview of a pull request. */
  skipLabels: z.array(Name).default([]),
});
export type PreviewsConfig = z.infer<typeof PreviewsConfig>;

export const SlipwayConfig = z.strictObject({
  /** The Slipway project the repository deploys to: its id (`prj_...`) or its name. */
  project: Name,
  /** The organization (id or name) that owns the project; needed when `project` is a name. */
  organization: Name.optional(),
  /** Preview deployments of pull requests. */
  previews: PreviewsConfig.prefault({}),
  /** Promote the merged commit's live preview to production on merge (default true). */
  promoteOnMerge: z.boolean().default(true),
  /** `always` (default) keeps one comment per pull request, `failures` only once a preview fails, `off` never. */
  comment: CommentMode.default('always'),
});
export type SlipwayConfig = z.infer<typeof SlipwayConfig>;

/** The outcome of reading `.github/slipway.yml`. */
export type ConfigResult =
  { kind: 'missing' } | { kind: 'invalid'; message: string } | { kind: 'ok'; config: SlipwayConfig };

/** Parses the text of `.github/slipway.yml`; a problem becomes a message that names the field. */
export function parseConfig(text: string): ConfigResult {
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    const message = err instanceof YAMLParseError ? err.message : String(err);
    return { kind: 'invalid', message: `${CONFIG_PATH} is not valid YAML: ${message}` };
  }
  const parsed = SlipwayConfig.safeParse(doc ?? {});
  if (parsed.success) return { kind: 'ok', config: parsed.data };
  const lines = parsed.error.issues.map((i) => {
    const path = i.path.join('.');
    return `- ${path ? `\`${path}\`: ` : ''}${i.message}`;
  });
  return { kind: 'invalid', message: `${CONFIG_PATH} is not valid:\n${lines.join('\n')}` };
}

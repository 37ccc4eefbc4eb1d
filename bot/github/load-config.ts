import { z } from 'zod';
import { CONFIG_PATH, type ConfigResult, parseConfig } from '../config.ts';
import { type GitHubRepo, statusOf } from './octokit.ts';

const FileContent = z.object({
  type: z.literal('file'),
  encoding: z.string(),
  content: z.string(),
});

/**
 * Reads `.github/slipway.yml` from the default branch: a pull request cannot change the settings
 * it is judged by (a fork could otherwise turn approval off for itself).
 */
export async function loadRepoConfig(gh: GitHubRepo): Promise<ConfigResult> {
  let data: unknown;
  try {
    ({ data } = await gh.octokit.rest.repos.getContent({
      owner: gh.owner,
      repo: gh.repo,
      path: CONFIG_PATH,
    }));
  } catch (err) {
    if (statusOf(err) === 404) return { kind: 'missing' };
    throw err;
  }
  const file = FileContent.safeParse(data);
  if (!file.success) return { kind: 'invalid', message: `${CONFIG_PATH} is not a file` };
  const text =
    file.data.encoding === 'base64'
      ? Buffer.from(file.data.content, 'base64').toString('utf8')
      : file.data.content;
  return parseConfig(text);
}

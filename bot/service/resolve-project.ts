import { ApiError, type SlipwayClient } from '../../api/client/index.ts';
import type { SlipwayConfig } from '../config.ts';

/** Finds the Slipway project a repository's `.github/slipway.yml` names. */
export interface ProjectResolver {
  /** The project's id; names are looked up once a minute at most. */
  resolveId(config: Pick<SlipwayConfig, 'project' | 'organization'>): Promise<string>;
}

export function createProjectResolver(
  client: SlipwayClient,
  now: () => number,
  ttlMs = 60_000,
): ProjectResolver {
  const cache = new Map<string, { id: string; until: number }>();
  return {
    async resolveId({ project, organization }) {
      // An id needs no look-up: the call that uses it says NOT_FOUND if it is wrong.
      if (project.startsWith('prj_')) return project;
      const key = `${organization ?? ''}/${project}`;
      const hit = cache.get(key);
      if (hit && hit.until > now()) return hit.id;
      const matches: { id: string; organizationId: string }[] = [];
      for await (const p of client.iterate.projects({
        limit: 100,
        ...(organization ? { org: organization } : {}),
      })) {
        if (p.name === project) matches.push(p);
      }
      const where = organization ? ` in organization "${organization}"` : '';
      if (matches.length === 0) {
        throw new ApiError(
          'NOT_FOUND',
          `No project named "${project}"${where} is visible to the bot's Slipway token. Check \`project\` and \`organization\` in .github/slipway.yml, and that the token's user is a member (developer or more) of the project's organization.`,
        );
      }
      if (matches.length > 1) {
        throw new ApiError(
          'CONFLICT',
          `Several projects named "${project}" are visible to the bot's token (in ${matches.map((m) => m.organizationId).join(', ')}). Set \`organization\` in .github/slipway.yml, or use the project's id.`,
        );
      }
      cache.set(key, { id: matches[0]!.id, until: now() + ttlMs });
      return matches[0]!.id;
    },
  };
}

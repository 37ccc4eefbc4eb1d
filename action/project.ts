import { ApiError, type SlipwayClient } from '../api/client/index.ts';
import type { Project } from '../api/schemas/projects.ts';

/** Lists are read 100 at a time, the most a page holds, to spend few requests. */
const PAGE = 100;

/** Finds the project by id (`prj_...`) or by name, within `organization` when given. */
export async function resolveProject(
  client: Pick<SlipwayClient, 'projects' | 'iterate'>,
  project: string,
  organization: string | undefined,
): Promise<Project> {
  if (project.startsWith('prj_')) {
    try {
      return await client.projects.get(project);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        throw new Error(
          `Project ${project} was not found, or the api-token's user is not a member of its organization.`,
        );
      }
      throw err;
    }
  }
  const matches: Project[] = [];
  for await (const p of client.iterate.projects({ org: organization, limit: PAGE })) {
    if (p.name !== project) continue;
    matches.push(p);
    // Names are unique within an organization: with one given, the first match is the one.
    if (organization) break;
  }
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new Error(
      `No project named "${project}"${organization ? ` in organization "${organization}"` : ''} is visible to the api-token's user.`,
    );
  }
  throw new Error(
    `Several organizations have a project named "${project}" (${matches.map((m) => m.organizationId).join(', ')}): set the organization input, or give the project's id.`,
  );
}

import { ApiError } from '../errors.ts';
import type { Project } from '../schemas/projects.ts';
import type { SlipwayClient } from './index.ts';

/** Lists are read 100 at a time, the most a page holds, to spend few requests. */
const PAGE = 100;

/** How the caller's tool names things in its messages. */
export interface FindProjectWording {
  /** Who is looking, e.g. "the api-token's user". */
  who: string;
  /** How to name an organization, e.g. "set the organization input". */
  orgHint: string;
}

/**
 * Finds a project by id (`prj_...`) or by name, within `organization` (id or name) when given.
 * Throws an Error that says what to do when none or several match.
 */
export async function findProject(
  client: Pick<SlipwayClient, 'projects' | 'iterate'>,
  project: string,
  organization: string | undefined,
  wording: FindProjectWording,
): Promise<Project> {
  if (project.startsWith('prj_')) {
    try {
      return await client.projects.get(project);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        throw new Error(
          `Project ${project} was not found, or ${wording.who} is not a member of its organization.`,
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
      `No project named "${project}"${organization ? ` in organization "${organization}"` : ''} is visible to ${wording.who}.`,
    );
  }
  throw new Error(
    `Several organizations have a project named "${project}" (${matches.map((m) => m.organizationId).join(', ')}): ${wording.orgHint}, or give the project's id.`,
  );
}

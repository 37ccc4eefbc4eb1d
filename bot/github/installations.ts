import type { Probot } from 'probot';
import { z } from 'zod';
import { LRUCache } from 'lru-cache';
import type { GitHubRepo, Octokit, RepoRef } from './octokit.ts';

/** Octokits for repositories the App is installed on. */
export interface GitHubAccess {
  /** The repository of a GitHub event, with the event's own Octokit; remembers its installation. */
  fromEvent(ref: RepoRef, installationId: number, octokit: Octokit): GitHubRepo;
  /** A repository outside of any GitHub event (a service webhook): finds the App's installation on it. */
  forRepo(ref: RepoRef): Promise<GitHubRepo>;
}

const Installation = z.object({ id: z.number().int() });

export function createGitHubAccess(app: Pick<Probot, 'auth'>): GitHubAccess {
  const installations = new LRUCache<string, number>({ max: 10_000 });
  const key = (ref: RepoRef) => `${ref.owner}/${ref.repo}`.toLowerCase();
  return {
    fromEvent(ref, installationId, octokit) {
      installations.set(key(ref), installationId);
      return { ...ref, octokit };
    },
    async forRepo(ref) {
      let id = installations.get(key(ref));
      if (id === undefined) {
        const asApp = await app.auth();
        const { data } = await asApp.rest.apps.getRepoInstallation({ owner: ref.owner, repo: ref.repo });
        id = Installation.parse(data).id;
        installations.set(key(ref), id);
      }
      // Probot caches installation tokens for an hour, so this costs a request only when it expires.
      return { ...ref, octokit: await app.auth(id) };
    },
  };
}

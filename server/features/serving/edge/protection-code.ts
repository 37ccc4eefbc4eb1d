import { ApiError } from '../../../../api/errors.ts';
import { createHostResolver, guardOf, normalizeHost, type HostResolver } from './resolve-host.ts';
import { roleIn } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { AUTH_PATH, CODE_TTL_MS, newSecret, sha256 } from '../protection/protection-cookie.ts';

/** Reads each host afresh: a sign-in is rare, and must see the project's protection as it is now. */
export const freshResolver = (deps: Deps): HostResolver => createHostResolver(deps, { ttlMs: 0 });

/**
 * After a member signs in to the dashboard for a protected page (`url`): a one-time code for
 * that page's host, and where to take it (`<origin>/_slipway/auth?code=...&next=<path>`). The
 * host must be a protected host of a project in one of the caller's organizations: the
 * dashboard never sends a code (or anyone) to any other address.
 */
export async function issueProtectionCode(
  deps: Deps,
  resolver: HostResolver,
  actor: Actor,
  url: string | undefined,
): Promise<string> {
  let page: URL;
  try {
    page = new URL(url ?? '');
  } catch {
    throw ApiError.validation([{ path: 'url', message: 'must be the address of a protected page' }]);
  }
  if (page.protocol !== 'http:' && page.protocol !== 'https:')
    throw ApiError.validation([{ path: 'url', message: 'must be an http or https address' }]);
  const host = normalizeHost(page.host);
  // A protected host whatever it serves now: a live deployment, or the edge's page about a
  // build, a failure or a branch without a preview yet, which are protected as much.
  const guard = guardOf(await resolver.resolve(host));
  // Not protected, or not there: nothing to sign in to (and no reason to send anyone there).
  if (!guard?.protection) throw ApiError.notFound(`A protected deployment at ${host}`);
  const project = await deps.db
    .selectFrom('projects')
    .select(['organization_id'])
    .where('id', '=', guard.projectId)
    .executeTakeFirstOrThrow();
  if (!(await roleIn(deps, actor, project.organization_id)))
    throw ApiError.forbidden(
      `${actor.email} is not a member of the organization that owns ${host}. Ask one of its admins to invite you, or for a share link.`,
    );
  const code = newSecret();
  const now = deps.clock.now();
  await deps.db
    .insertInto('protection_codes')
    .values({
      code_hash: sha256(code),
      project_id: guard.projectId,
      host,
      user_id: actor.userId,
      expires_at: new Date(now.getTime() + CODE_TTL_MS).toISOString(),
      used_at: null,
    })
    .execute();
  const next = `${page.pathname}${page.search}`;
  return `${page.origin}${AUTH_PATH}?code=${code}&next=${encodeURIComponent(next)}`;
}

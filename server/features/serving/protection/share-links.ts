import { ApiError } from '../../../../api/errors.ts';
import type { PageQuery } from '../../../../api/schemas/common.ts';
import type { CreatedShareLink, CreateShareLinkBody, ShareLink } from '../../../../api/schemas/protection.ts';
import { newId } from '../../../core/ids.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { readPage, type ListPage } from '../../../platform/http/pagination.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';
import { newSecret, sha256, SHARE_PATH, SHARE_PREFIX } from './protection-cookie.ts';

const DEFAULT_HOURS = 24;

type LinkRow = { id: string; url: string; created_at: string; expires_at: string };

const toShareLink = (row: LinkRow, createdBy: string): ShareLink => ({
  id: row.id,
  target: row.url,
  createdBy,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/**
 * Makes a share link (admin and up: whoever holds it sees the project's protected hosts without
 * an account until it expires). Only the token's SHA-256 is kept; the answer carries it this once.
 */
export async function createShareLink(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: CreateShareLinkBody,
): Promise<CreatedShareLink> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const deployment = await deps.db
    .selectFrom('deployments')
    .select(['host'])
    .where('id', '=', body.deploymentId)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (!deployment) throw ApiError.notFound(`Deployment ${body.deploymentId} in project ${project.name}`);
  const token = newSecret(SHARE_PREFIX);
  const now = deps.clock.now();
  const row = {
    id: newId('psl'),
    project_id: project.id,
    token_hash: sha256(token),
    url: deps.urls.forHost(deployment.host),
    created_by: actor.userId,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + (body.expiresInHours ?? DEFAULT_HOURS) * 3600_000).toISOString(),
  };
  await deps.db.insertInto('protection_links').values(row).execute();
  // The edges keep each protected host's links (TargetProtection.links): this one among them.
  signalRoutingChange(deps, project.id);
  return { ...toShareLink(row, actor.email), url: `${row.url}${SHARE_PATH}?token=${token}` };
}

/** The project's share links, newest first, expired ones included, without their tokens (any member). */
export async function listShareLinks(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: PageQuery,
): Promise<ListPage<ShareLink>> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const base = deps.db.selectFrom('protection_links as l').where('l.project_id', '=', project.id);
  const page = await readPage(
    base
      .innerJoin('users as u', 'u.id', 'l.created_by')
      .select(['l.id', 'l.url', 'l.created_at', 'l.expires_at', 'u.email']),
    base,
    q,
    { time: 'l.created_at', id: 'l.id', key: (r) => [r.created_at, r.id] },
  );
  return { ...page, items: page.items.map((r) => toShareLink(r, r.email)) };
}

/**
 * Revokes a share link (admin and up): it opens nothing from now on, and the cookies it set stop
 * opening anything as soon as the edges drop the project's cached routes (at once through the
 * routing signal, within SLIPWAY_EDGE_ROUTE_TTL should a signal be lost).
 */
export async function deleteShareLink(
  deps: Deps,
  actor: Actor,
  projectId: string,
  linkId: string,
): Promise<void> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const res = await deps.db
    .deleteFrom('protection_links')
    .where('id', '=', linkId)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw ApiError.notFound(`Share link ${linkId}`);
  signalRoutingChange(deps, project.id);
}

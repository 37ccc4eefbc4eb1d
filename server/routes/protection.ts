import { z } from 'zod';
import { id, PageQuery } from '../../api/schemas/common.ts';
import {
  CreatedProtectionBypass,
  CreatedShareLink,
  CreateShareLinkBody,
  ShareLink,
} from '../../api/schemas/protection.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { deleteBypassSecret, rotateBypassSecret } from '../services/protection/bypass-secret.ts';
import { createShareLink, deleteShareLink, listShareLinks } from '../services/protection/share-links.ts';

const ProjectParams = z.object({ projectId: z.string() });
const LinkParams = ProjectParams.extend({ linkId: id('psl') });

/** Preview protection's secrets: the bypass secret and share links (docs/protection.md). */
export const protectionRoutes = [
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/protection/bypass',
    tag: 'projects',
    summary:
      'Make (or rotate) the protection bypass secret (admins); shown this once, the previous one stops working',
    params: ProjectParams,
    response: CreatedProtectionBypass,
    successStatus: 201,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await rotateBypassSecret(deps, actor, params.projectId),
    }),
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId/protection/bypass',
    tag: 'projects',
    summary: 'Remove the protection bypass secret (admins)',
    params: ProjectParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await deleteBypassSecret(deps, actor, params.projectId);
      return { kind: 'deleted', message: 'Protection bypass secret removed' };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/protection/links',
    tag: 'projects',
    summary: 'Make an expiring share link to a protected deployment (admins); its token is shown this once',
    params: ProjectParams,
    body: CreateShareLinkBody,
    response: CreatedShareLink,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createShareLink(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/protection/links',
    tag: 'projects',
    summary: "List the project's share links, newest first, without their tokens",
    params: ProjectParams,
    query: PageQuery,
    response: ShareLink,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listShareLinks(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId/protection/links/:linkId',
    tag: 'projects',
    summary: 'Revoke a share link (admins): it opens nothing from now on',
    params: LinkParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await deleteShareLink(deps, actor, params.projectId, params.linkId);
      return { kind: 'deleted', message: `Share link ${params.linkId} revoked` };
    },
  }),
];

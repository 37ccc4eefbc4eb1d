import { protection } from '../../../../api/routes/protection.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { deleteBypassSecret, rotateBypassSecret } from '../protection/bypass-secret.ts';
import { createShareLink, deleteShareLink, listShareLinks } from '../protection/share-links.ts';

/** Preview protection's secrets: the bypass secret and share links (docs/protection.md). */
export const protectionRoutes = [
  route({
    ...protection.rotateBypass,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await rotateBypassSecret(deps, actor, params.projectId),
    }),
  }),
  route({
    ...protection.removeBypass,
    handler: async ({ deps, actor, params }) => {
      await deleteBypassSecret(deps, actor, params.projectId);
      return { kind: 'deleted', message: 'Protection bypass secret removed' };
    },
  }),
  route({
    ...protection.share,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createShareLink(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...protection.links,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listShareLinks(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...protection.revokeLink,
    handler: async ({ deps, actor, params }) => {
      await deleteShareLink(deps, actor, params.projectId, params.linkId);
      return { kind: 'deleted', message: `Share link ${params.linkId} revoked` };
    },
  }),
];

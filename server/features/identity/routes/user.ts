import { user } from '../../../../api/routes/user.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { createToken } from '../users/create-token.ts';
import { getUser } from '../users/get-user.ts';
import { listTokens } from '../users/list-tokens.ts';
import { revokeToken } from '../users/revoke-token.ts';

export const userRoutes = [
  route({
    ...user.get,
    handler: async ({ deps, actor }) => ({ kind: 'data', data: await getUser(deps, actor) }),
  }),
  route({
    ...user.createToken,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await createToken(deps, actor.userId, body.name),
    }),
  }),
  route({
    ...user.listTokens,
    handler: async ({ deps, actor, query }) => {
      const page = await listTokens(deps, actor, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...user.revokeToken,
    handler: async ({ deps, actor, params }) => {
      await revokeToken(deps, actor, params.tokenId);
      return { kind: 'deleted', message: `Token ${params.tokenId} revoked` };
    },
  }),
];

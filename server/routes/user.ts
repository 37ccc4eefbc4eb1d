import { z } from 'zod';
import { PageQuery } from '../../api/schemas/common.ts';
import { CreatedToken, CreateTokenBody, TokenSummary, User } from '../../api/schemas/user.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { createToken } from '../services/users/create-token.ts';
import { getUser } from '../services/users/get-user.ts';
import { listTokens } from '../services/users/list-tokens.ts';
import { revokeToken } from '../services/users/revoke-token.ts';

export const userRoutes = [
  route({
    method: 'GET',
    url: '/v1/user',
    tag: 'user',
    summary: 'The caller and their organizations',
    response: User,
    handler: async ({ deps, actor }) => ({ kind: 'data', data: await getUser(deps, actor) }),
  }),
  route({
    method: 'POST',
    url: '/v1/user/tokens',
    tag: 'user',
    summary: 'Create an API token (shown once)',
    body: CreateTokenBody,
    response: CreatedToken,
    successStatus: 201,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await createToken(deps, actor.userId, body.name),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/user/tokens',
    tag: 'user',
    summary: 'List API tokens (without their secret)',
    query: PageQuery,
    response: TokenSummary,
    responseKind: 'list',
    handler: async ({ deps, actor, query }) => {
      const page = await listTokens(deps, actor, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'DELETE',
    url: '/v1/user/tokens/:tokenId',
    tag: 'user',
    summary: 'Revoke an API token',
    params: z.object({ tokenId: z.string() }),
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await revokeToken(deps, actor, params.tokenId);
      return { kind: 'deleted', message: `Token ${params.tokenId} revoked` };
    },
  }),
];

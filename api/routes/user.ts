import { z } from 'zod';
import { PageQuery } from '../schemas/common.ts';
import { CreatedToken, CreateTokenBody, TokenSummary, User } from '../schemas/user.ts';
import { contract } from './contract.ts';

export const user = {
  get: contract({
    method: 'GET',
    url: '/v1/user',
    tag: 'user',
    summary: 'The caller and their organizations',
    response: User,
  }),
  createToken: contract({
    method: 'POST',
    url: '/v1/user/tokens',
    tag: 'user',
    summary: 'Create an API token (shown once)',
    body: CreateTokenBody,
    response: CreatedToken,
    successStatus: 201,
  }),
  listTokens: contract({
    method: 'GET',
    url: '/v1/user/tokens',
    tag: 'user',
    summary: 'List API tokens (without their secret)',
    query: PageQuery,
    response: TokenSummary,
    responseKind: 'list',
  }),
  revokeToken: contract({
    method: 'DELETE',
    url: '/v1/user/tokens/:tokenId',
    tag: 'user',
    summary: 'Revoke an API token',
    params: z.object({ tokenId: z.string() }),
    responseKind: 'deleted',
  }),
};

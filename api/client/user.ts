import type { z } from 'zod';
import { user } from '../routes/user.ts';
import type { CreateTokenBody } from '../schemas/user.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

/** The caller and their API tokens. */
export function userApi(c: Caller) {
  return {
    /** `GET /v1/user`: the caller and their organizations. */
    get: (o?: CallOptions) => c.call(user.get, {}, o),
    tokens: {
      /** `POST /v1/user/tokens`: the only answer that holds the secret `token`. */
      create: (body: z.input<typeof CreateTokenBody>, o?: CallOptions) =>
        c.call(user.createToken, {}, { ...o, body }),
      /** `GET /v1/user/tokens`: one page, without secrets. */
      list: (query: PageInput = {}, o?: CallOptions) => c.call(user.listTokens, {}, { ...o, query }),
      /** `DELETE /v1/user/tokens/<id>`: the token stops working at once. */
      revoke: (tokenId: string, o?: CallOptions) => c.call(user.revokeToken, { tokenId }, o),
    },
  };
}

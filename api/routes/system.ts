import { z } from 'zod';
import { contract } from './contract.ts';

/** Health, readiness and the API description; none of them needs a token. */
export const system = {
  healthz: contract({
    method: 'GET',
    url: '/healthz',
    tag: 'system',
    summary: 'The process is alive',
    auth: false,
    responseKind: 'bare',
    response: z.object({ status: z.literal('ok') }),
  }),
  readyz: contract({
    method: 'GET',
    url: '/readyz',
    tag: 'system',
    summary: 'The database is reachable',
    auth: false,
    responseKind: 'bare',
    response: z.object({ status: z.enum(['ready', 'database unreachable']) }),
  }),
  openapi: contract({
    method: 'GET',
    url: '/v1/openapi.json',
    tag: 'system',
    summary: 'OpenAPI 3.1 description of this API',
    auth: false,
    responseKind: 'bare',
    response: z.looseObject({ openapi: z.string() }),
  }),
  docs: contract({
    method: 'GET',
    url: '/docs',
    tag: 'system',
    summary: 'Human-readable API reference',
    auth: false,
    responseKind: 'text',
  }),
  /** The file is the server's DOCS_SCRIPT (server/platform/http/docs-page.ts); a test checks they agree. */
  docsScript: contract({
    method: 'GET',
    url: '/docs/redoc.standalone.js',
    tag: 'system',
    summary: "The API reference's renderer (Redoc)",
    auth: false,
    responseKind: 'text',
  }),
};

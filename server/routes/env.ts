import { z } from 'zod';
import {
  CreateEnvBody,
  EnvExport,
  EnvSelectorQuery,
  EnvVar,
  ExportEnvQuery,
  ImportEnvBody,
  ImportEnvResult,
  ListEnvQuery,
  UpdateEnvBody,
} from '../../api/schemas/env.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { createEnvVar } from '../services/env/create-env-var.ts';
import { deleteEnvVar } from '../services/env/delete-env-var.ts';
import { exportEnvVars } from '../services/env/export-env-vars.ts';
import { importEnvVars } from '../services/env/import-env-vars.ts';
import { listEnvVars } from '../services/env/list-env-vars.ts';
import { updateEnvVar } from '../services/env/update-env-var.ts';

const ProjectParams = z.object({ projectId: z.string() });
const KeyParams = z.object({ projectId: z.string(), key: z.string() });

export const envRoutes = [
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/env',
    tag: 'env',
    summary: 'List environment variables (newest first); secrets have value null',
    params: ProjectParams,
    query: ListEnvQuery,
    response: EnvVar,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listEnvVars(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/env',
    tag: 'env',
    summary: 'Create an environment variable (encrypted at rest; encrypted: true hides it from reads)',
    params: ProjectParams,
    body: CreateEnvBody,
    response: EnvVar,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createEnvVar(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/env/import',
    tag: 'env',
    summary: 'Import variables into one environment, all or nothing',
    params: ProjectParams,
    body: ImportEnvBody,
    response: ImportEnvResult,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await importEnvVars(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/env/export',
    tag: 'env',
    summary:
      'Export one environment in plaintext, secrets included (developer and up): format env (text/plain), json or yaml (application/yaml)',
    params: ProjectParams,
    query: ExportEnvQuery,
    response: EnvExport,
    handler: async ({ deps, actor, params, query, reply }) => {
      const out = await exportEnvVars(deps, actor, params.projectId, query);
      if (out.kind === 'json') return { kind: 'data', data: out.data };
      // Plaintext secrets: keep them out of shared caches.
      void reply.status(200).header('Cache-Control', 'no-store').type(out.contentType).send(out.text);
      return { kind: 'sent' };
    },
  }),
  route({
    method: 'PATCH',
    url: '/v1/projects/:projectId/env/:key',
    tag: 'env',
    summary: 'Update value and/or encrypted of a variable; ?environment= when the key is in several',
    params: KeyParams,
    query: EnvSelectorQuery,
    body: UpdateEnvBody,
    response: EnvVar,
    handler: async ({ deps, actor, params, query, body }) => ({
      kind: 'data',
      data: await updateEnvVar(deps, actor, params.projectId, params.key, query, body),
    }),
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId/env/:key',
    tag: 'env',
    summary: 'Delete a variable; ?environment= when the key is in several',
    params: KeyParams,
    query: EnvSelectorQuery,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params, query }) => {
      const gone = await deleteEnvVar(deps, actor, params.projectId, params.key, query);
      return { kind: 'deleted', message: `Environment variable ${gone.key} (${gone.environment}) deleted` };
    },
  }),
];

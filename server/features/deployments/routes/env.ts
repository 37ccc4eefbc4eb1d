import { env } from '../../../../api/routes/env.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { createEnvVar } from '../env/create-env-var.ts';
import { deleteEnvVar } from '../env/delete-env-var.ts';
import { exportEnvVars } from '../env/export-env-vars.ts';
import { importEnvVars } from '../env/import-env-vars.ts';
import { listEnvVars } from '../env/list-env-vars.ts';
import { updateEnvVar } from '../env/update-env-var.ts';

export const envRoutes = [
  route({
    ...env.list,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listEnvVars(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...env.create,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createEnvVar(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...env.import,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await importEnvVars(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...env.export,
    handler: async ({ deps, actor, params, query, reply }) => {
      const out = await exportEnvVars(deps, actor, params.projectId, query);
      if (out.kind === 'json') return { kind: 'data', data: out.data };
      // Plaintext secrets: keep them out of shared caches.
      void reply.status(200).header('Cache-Control', 'no-store').type(out.contentType).send(out.text);
      return { kind: 'sent' };
    },
  }),
  route({
    ...env.update,
    handler: async ({ deps, actor, params, query, body }) => ({
      kind: 'data',
      data: await updateEnvVar(deps, actor, params.projectId, params.key, query, body),
    }),
  }),
  route({
    ...env.remove,
    handler: async ({ deps, actor, params, query }) => {
      const gone = await deleteEnvVar(deps, actor, params.projectId, params.key, query);
      return { kind: 'deleted', message: `Environment variable ${gone.key} (${gone.environment}) deleted` };
    },
  }),
];

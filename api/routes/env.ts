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
} from '../schemas/env.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const KeyParams = z.object({ projectId: z.string(), key: z.string() });

export const env = {
  list: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/env',
    tag: 'env',
    summary: 'List environment variables (newest first); secrets have value null',
    params: ProjectParams,
    query: ListEnvQuery,
    response: EnvVar,
    responseKind: 'list',
  }),
  create: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/env',
    tag: 'env',
    summary: 'Create an environment variable (encrypted at rest; encrypted: true hides it from reads)',
    params: ProjectParams,
    body: CreateEnvBody,
    response: EnvVar,
    successStatus: 201,
  }),
  import: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/env/import',
    tag: 'env',
    summary: 'Import variables into one environment, all or nothing',
    params: ProjectParams,
    body: ImportEnvBody,
    response: ImportEnvResult,
  }),
  export: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/env/export',
    tag: 'env',
    summary:
      'Export one environment in plaintext, secrets included (developer and up): format env (text/plain), json or yaml (application/yaml)',
    params: ProjectParams,
    query: ExportEnvQuery,
    response: EnvExport,
  }),
  update: contract({
    method: 'PATCH',
    url: '/v1/projects/:projectId/env/:key',
    tag: 'env',
    summary: 'Update value and/or encrypted of a variable; ?environment= when the key is in several',
    params: KeyParams,
    query: EnvSelectorQuery,
    body: UpdateEnvBody,
    response: EnvVar,
  }),
  remove: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId/env/:key',
    tag: 'env',
    summary: 'Delete a variable; ?environment= when the key is in several',
    params: KeyParams,
    query: EnvSelectorQuery,
    responseKind: 'deleted',
  }),
};

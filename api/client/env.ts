import type { z } from 'zod';
import { pathOf } from '../routes/contract.ts';
import { env } from '../routes/env.ts';
import { type CreateEnvBody, EnvExport, type ImportEnvBody, type UpdateEnvBody } from '../schemas/env.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { EnvListQueryInput, EnvSelectorInput, ExportQueryInput } from './inputs.ts';

/** Export as text: `env` (dotenv lines, the default) or `yaml`. */
export type TextExportQuery = ExportQueryInput & { format?: 'env' | 'yaml' };
/** Export as a key-to-value object. */
export type JsonExportQuery = ExportQueryInput & { format: 'json' };

export interface EnvExporter {
  /** `format: 'json'`: an object of key to plaintext value. */
  (projectId: string, query: JsonExportQuery, o?: CallOptions): Promise<Record<string, string>>;
  /** `format: 'env'` (default) or `'yaml'`: the file's text. */
  (projectId: string, query?: TextExportQuery, o?: CallOptions): Promise<string>;
}

/** Environment variables of a project; a variable is identified by key and environment. */
export function envApi(c: Caller) {
  const exportEnv = ((projectId: string, query: ExportQueryInput = {}, o?: CallOptions) =>
    query.format === 'json'
      ? c.data(EnvExport, env.export.method, pathOf(env.export, { projectId }), { ...o, query })
      : c.text(pathOf(env.export, { projectId }), { ...o, query })) as EnvExporter;
  return {
    /** One page of variables; secrets (`encrypted`) come with `value: null`. */
    list: (projectId: string, query: EnvListQueryInput = {}, o?: CallOptions) =>
      c.call(env.list, { projectId }, { ...o, query }),
    create: (projectId: string, body: z.input<typeof CreateEnvBody>, o?: CallOptions) =>
      c.call(env.create, { projectId }, { ...o, body }),
    /** Changes `value` and/or `encrypted`; pass `environment` when the key exists in several. */
    update: (
      projectId: string,
      key: string,
      body: z.input<typeof UpdateEnvBody>,
      selector: EnvSelectorInput = {},
      o?: CallOptions,
    ) => c.call(env.update, { projectId, key }, { ...o, body, query: selector }),
    remove: (projectId: string, key: string, selector: EnvSelectorInput = {}, o?: CallOptions) =>
      c.call(env.remove, { projectId, key }, { ...o, query: selector }),
    /** All or nothing: `{ created, updated, skipped }`. */
    import: (projectId: string, body: z.input<typeof ImportEnvBody>, o?: CallOptions) =>
      c.call(env.import, { projectId }, { ...o, body }),
    /** Plaintext of every variable of one environment (role developer and up). */
    export: exportEnv,
  };
}

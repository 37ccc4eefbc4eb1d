import { z } from 'zod';
import { PageQuery, Timestamp } from './common.ts';

export const EnvEnvironment = z.enum(['production', 'preview', 'development']);
export type EnvEnvironment = z.infer<typeof EnvEnvironment>;

export const EnvKey = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must match ^[A-Za-z_][A-Za-z0-9_]*$');
export const EnvValue = z
  .string()
  .refine((v) => Buffer.byteLength(v, 'utf8') <= 65_536, 'must be at most 64 KiB (65536 bytes in UTF-8)');

export const EnvVar = z.object({
  /** Variable name. */
  key: z.string(),
  /** The value; `null` for an `encrypted` (secret) variable. */
  value: z.string().nullable(),
  /** A secret: reads return `value: null`. */
  encrypted: z.boolean(),
  /** `production`, `preview` or `development`. */
  environment: EnvEnvironment,
  /** When the variable was created. */
  createdAt: Timestamp,
  /** When its value or `encrypted` last changed. */
  updatedAt: Timestamp,
});
export type EnvVar = z.infer<typeof EnvVar>;

export const CreateEnvBody = z.strictObject({
  /** Name: a letter or `_`, then letters, digits and `_`; at most 256 characters. */
  key: EnvKey,
  /** At most 64 KiB of UTF-8. */
  value: EnvValue,
  /** Mark as secret (reads answer `value: null`). Default false. */
  encrypted: z.boolean().default(false),
  /** Default `production`. */
  environment: EnvEnvironment.default('production'),
});
export type CreateEnvBody = z.infer<typeof CreateEnvBody>;

export const UpdateEnvBody = z
  .strictObject({
    /** New value, at most 64 KiB. */
    value: EnvValue.optional(),
    /** Mark or unmark as secret. */
    encrypted: z.boolean().optional(),
  })
  .refine((b) => b.value !== undefined || b.encrypted !== undefined, 'must change value or encrypted');
export type UpdateEnvBody = z.infer<typeof UpdateEnvBody>;

/** `?environment=` of `PATCH` and `DELETE /env/<key>`. */
export const EnvSelectorQuery = z.strictObject({
  /** Which variable of that key; required when the key exists in several environments. */
  environment: EnvEnvironment.optional(),
});
export type EnvSelectorQuery = z.infer<typeof EnvSelectorQuery>;

/** `GET /env`: pagination and an optional environment filter. */
export const ListEnvQuery = PageQuery.extend({
  /** Only variables of this environment. */
  environment: EnvEnvironment.optional(),
});
export type ListEnvQuery = z.infer<typeof ListEnvQuery>;

export const ImportEnvVariable = z.strictObject({
  /** Variable name. */
  key: EnvKey,
  /** At most 64 KiB of UTF-8. */
  value: EnvValue,
  /** Secret flag; default false for a new variable, unchanged for an overwritten one. */
  encrypted: z.boolean().optional(),
});

export const ImportEnvBody = z.strictObject({
  /** The variables, each key at most once. */
  variables: z
    .array(ImportEnvVariable)
    .max(1000, 'must hold at most 1000 variables')
    .superRefine((vars, ctx) => {
      const first = new Map<string, number>();
      vars.forEach((v, i) => {
        const seen = first.get(v.key);
        if (seen === undefined) first.set(v.key, i);
        else
          ctx.addIssue({
            code: 'custom',
            path: [i, 'key'],
            message: `duplicates variables.${seen}.key ("${v.key}"); give each key once`,
          });
      });
    }),
  /** Replace the values of keys that already exist (else they are skipped). Default false. */
  overwrite: z.boolean().default(false),
  /** Environment the variables go to. Default `production`. */
  environment: EnvEnvironment.default('production'),
});
export type ImportEnvBody = z.infer<typeof ImportEnvBody>;

export const ImportEnvResult = z.object({
  /** Variables that did not exist. */
  created: z.number().int(),
  /** Existing variables overwritten (`overwrite: true`). */
  updated: z.number().int(),
  /** Existing variables left alone (`overwrite: false`). */
  skipped: z.number().int(),
});
export type ImportEnvResult = z.infer<typeof ImportEnvResult>;

export const ExportEnvQuery = z.strictObject({
  /** `env` (text/plain, default), `json` (envelope) or `yaml` (application/yaml). */
  format: z.enum(['env', 'json', 'yaml']).default('env'),
  /** Default `production`. */
  environment: EnvEnvironment.default('production'),
});
export type ExportEnvQuery = z.infer<typeof ExportEnvQuery>;

/** `data` of a JSON export: key to plaintext value. */
export const EnvExport = z.record(z.string(), z.string());

import { stringify } from 'yaml';
import { ApiError } from '../../../../api/errors.ts';
import type { ExportEnvQuery } from '../../../../api/schemas/env.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { formatDotenv } from './format-dotenv.ts';
import { readPlaintext } from './read-plaintext.ts';

export type EnvExportResult =
  { kind: 'json'; data: Record<string, string> } | { kind: 'text'; contentType: string; text: string };

/** Every variable of one environment in plaintext, secrets included: developers and up only. */
export async function exportEnvVars(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: ExportEnvQuery,
): Promise<EnvExportResult> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const vars = await readPlaintext(deps, project.id, q.environment);
  // fromEntries defines own properties, so a key named `__proto__` stays a plain entry.
  const data = Object.fromEntries(vars.map((v) => [v.key, v.value]));
  switch (q.format) {
    case 'json':
      return { kind: 'json', data };
    case 'yaml':
      // lineWidth 0: no folding, so long values come back byte for byte.
      return {
        kind: 'text',
        contentType: 'application/yaml; charset=utf-8',
        text:
          vars.length === 0
            ? '{}\n'
            : stringify(new Map(vars.map((v) => [v.key, v.value])), { lineWidth: 0 }),
      };
    case 'env': {
      const out = formatDotenv(vars);
      if (!out.ok) {
        throw ApiError.validation(
          out.problems.map((p) => ({
            path: 'format',
            message: `${p.key} cannot be written as a .env line: ${p.reason}`,
          })),
          `Some values cannot be written in the env format so that dotenv reads them back unchanged (${out.problems
            .map((p) => p.key)
            .join(', ')}); export with format=json or format=yaml instead`,
        );
      }
      return { kind: 'text', contentType: 'text/plain; charset=utf-8', text: out.text };
    }
  }
}

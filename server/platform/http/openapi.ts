import { z } from 'zod';
import { ErrorEnvelope } from '../../../api/schemas/common.ts';
import { successSchema } from './envelope.ts';
import { errorExample, operationExamples } from './openapi-examples.ts';
import type { RouteSpec } from './route-spec.ts';

export const API_VERSION = '1.2.0';

const toJson = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;

/** The OpenAPI 3.1 description, generated from the same zod schemas the server validates with. */
export function buildOpenApi(specs: RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const path = spec.url.replace(/:([A-Za-z0-9]+)/g, '{$1}');
    (paths[path] ??= {})[spec.method.toLowerCase()] = operationOf(spec, path);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Slipway API',
      version: API_VERSION,
      description: [
        'Deployment hosting service: projects, deployments, domains, environment variables, organizations, monitoring and webhooks.',
        '',
        'Authenticate with `Authorization: Bearer slw_...` (create a token with `npx slipway token create --email you@example.com --name laptop` on the server, or `POST /v1/user/tokens`).',
        'Every answer is an envelope: `{ "success": true, "data": ... }` (lists add `meta`), or `{ "success": false, "error": { "code", "message", "details" } }`.',
        'Guides: docs/api.md in the repository; the machine-readable description is `/v1/openapi.json`.',
      ].join('\n'),
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API token (slw_...)' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

/** One route's operation, at `path` (its URL with `{placeholders}`). */
function operationOf(spec: RouteSpec, path: string): Record<string, unknown> {
  const parameters = parametersOf(spec);
  const status = String(spec.successStatus ?? 200);
  const answer = successSchema(spec);
  const success = answer ? toJson(answer, 'output') : { type: 'string' };
  const examples = operationExamples[`${spec.method} ${spec.url}`] ?? {};
  const operation: Record<string, unknown> = {
    summary: spec.summary,
    tags: [spec.tag],
    operationId: `${spec.method.toLowerCase()}${path
      .replace(/[{}]/g, '')
      .replace(/\/(\w)/g, (_, c: string) => c.toUpperCase())
      .replace(/[^A-Za-z0-9]/g, '')}`,
    parameters,
    responses: {
      [status]: {
        description: 'Success',
        content: {
          'application/json': {
            schema: success,
            ...(examples.response !== undefined ? { example: exampleOf(spec, examples.response) } : {}),
          },
        },
      },
      default: {
        description: 'Error',
        content: { 'application/json': { schema: toJson(ErrorEnvelope, 'output'), example: errorExample } },
      },
    },
    ...(spec.auth === false ? { security: [] } : {}),
    ...(spec.deprecated ? { deprecated: true } : {}),
  };
  const requestBody = requestBodyOf(spec, examples.request);
  if (requestBody) operation.requestBody = requestBody;
  return operation;
}

/** The route's path parameters, then its query's. */
function parametersOf(spec: RouteSpec): unknown[] {
  const parameters: unknown[] = [];
  for (const name of spec.url.match(/:([A-Za-z0-9]+)/g) ?? []) {
    parameters.push({ name: name.slice(1), in: 'path', required: true, schema: { type: 'string' } });
  }
  if (spec.query) {
    const q = toJson(spec.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      parameters.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema });
    }
  }
  return parameters;
}

/** An answer's example, in the envelope of the route's kind of answer. */
function exampleOf(spec: RouteSpec, data: unknown): unknown {
  return spec.responseKind === 'list'
    ? { success: true, data: [data], meta: { page: 1, limit: 10, total: 1, next: null } }
    : spec.responseKind === 'bare'
      ? data
      : { success: true, data };
}

/** The route's request body (raw bytes or JSON, with its example), if it takes one. */
function requestBodyOf(spec: RouteSpec, example: unknown): Record<string, unknown> | undefined {
  if (spec.rawBody) {
    return {
      required: true,
      content: {
        'application/octet-stream': {
          schema: { type: 'string', contentMediaType: 'application/octet-stream' },
        },
      },
    };
  }
  if (!spec.body) return undefined;
  return {
    required: true,
    content: {
      'application/json': {
        schema: toJson(spec.body, 'input'),
        ...(example !== undefined ? { example } : {}),
      },
    },
  };
}

/** The reference's sections, in the order a newcomer meets them. */
const TAGS: Record<string, string> = {
  projects: 'A project builds one repository (or uploaded files) and serves it.',
  deployments: 'Builds of a project: production and previews, their logs, promote and rollback.',
  uploads: 'Deploy files from anywhere: send only what the service does not have yet.',
  env: "A project's environment variables, plain or secret, per target.",
  domains: 'Custom domains: verification by DNS and certificates.',
  webhooks: 'Signed notifications of deployment events, with a delivery log and redelivery.',
  monitoring: 'Traffic metrics, health and alerts of a project.',
  organizations: 'Organizations, their members and roles.',
  user: 'The caller and their API tokens.',
  billing: 'Plans and usage.',
  github: "The GitHub App's durable queue: deliveries stored at once, processed afterwards.",
  versioned: 'The reference interface: paid operations.',
};

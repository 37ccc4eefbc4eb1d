import { z } from 'zod';
import { ErrorEnvelope, PageMeta } from '../../api/schemas/common.ts';
import type { RouteSpec } from './route.ts';

export const API_VERSION = '1.2.0';

const toJson = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;

/** The OpenAPI 3.1 description, generated from the same zod schemas the server validates with. */
export function buildOpenApi(specs: RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const path = spec.url.replace(/:([A-Za-z0-9]+)/g, '{$1}');
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
    const status = String(spec.successStatus ?? 200);
    const data = spec.response ? toJson(spec.response, 'output') : {};
    let success: Record<string, unknown>;
    switch (spec.responseKind ?? 'data') {
      case 'list':
        success = {
          type: 'object',
          properties: {
            success: { const: true },
            data: { type: 'array', items: data },
            meta: toJson(PageMeta, 'output'),
          },
        };
        break;
      case 'deleted':
        success = { type: 'object', properties: { success: { const: true }, message: { type: 'string' } } };
        break;
      case 'text':
        success = { type: 'string' };
        break;
      default:
        success = { type: 'object', properties: { success: { const: true }, data } };
    }
    const operation: Record<string, unknown> = {
      summary: spec.summary,
      tags: [spec.tag],
      operationId: `${spec.method.toLowerCase()}${path
        .replace(/[{}]/g, '')
        .replace(/\/(\w)/g, (_, c: string) => c.toUpperCase())
        .replace(/[^A-Za-z0-9]/g, '')}`,
      parameters,
      responses: {
        [status]: { description: 'Success', content: { 'application/json': { schema: success } } },
        default: {
          description: 'Error',
          content: { 'application/json': { schema: toJson(ErrorEnvelope, 'output') } },
        },
      },
      ...(spec.auth === false ? { security: [] } : {}),
      ...(spec.deprecated ? { deprecated: true } : {}),
    };
    if (spec.rawBody) {
      operation.requestBody = {
        required: true,
        content: {
          'application/octet-stream': {
            schema: { type: 'string', contentMediaType: 'application/octet-stream' },
          },
        },
      };
    } else if (spec.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: toJson(spec.body, 'input') } },
      };
    }
    (paths[path] ??= {})[spec.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Slipway API',
      version: API_VERSION,
      description:
        'Deployment hosting service: projects, deployments, domains, environment variables, organizations, monitoring and webhooks.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API token (slw_...)' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A self-contained page (no CDN: the service may run offline) listing every operation. */
export function renderDocs(doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<
    string,
    Record<string, { summary: string; tags: string[]; requestBody?: unknown; parameters: unknown[] }>
  >;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const body = op.requestBody
        ? `<details><summary>Request body</summary><pre>${escapeHtml(JSON.stringify(op.requestBody, null, 2))}</pre></details>`
        : '';
      const params = op.parameters.length
        ? `<details><summary>Parameters</summary><pre>${escapeHtml(JSON.stringify(op.parameters, null, 2))}</pre></details>`
        : '';
      const html = `<section><h3><code class="m ${method}">${method.toUpperCase()}</code> <code>${escapeHtml(path)}</code></h3><p>${escapeHtml(op.summary)}</p>${params}${body}</section>`;
      const tag = op.tags[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const sections = [...byTag].map(([tag, ops]) => `<h2>${escapeHtml(tag)}</h2>${ops.join('')}`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Slipway API</title>
<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
section{border-top:1px solid #ddd;padding:.5rem 0}code.m{padding:2px 6px;border-radius:4px;color:#fff;background:#555}
.get{background:#2b7a3d!important}.post{background:#1d5fa8!important}.patch{background:#a86b1d!important}.delete{background:#a8321d!important}
pre{background:#f6f6f6;padding:.5rem;overflow:auto}</style></head><body>
<h1>Slipway API <small>${escapeHtml(String((doc.info as { version: string }).version))}</small></h1>
<p>Machine-readable description: <a href="/v1/openapi.json">/v1/openapi.json</a>. Authenticate with <code>Authorization: Bearer slw_...</code>.</p>
${sections}</body></html>`;
}

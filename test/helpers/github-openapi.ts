import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * Checks a call to GitHub's REST API against GitHub's own OpenAPI description
 * (`@octokit/openapi`): the operation exists, query parameters are known, and the JSON body has
 * the required fields, no unknown ones, and allowed values for enums and simple types.
 */
type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  nullable?: boolean;
  additionalProperties?: boolean | Schema;
};
type Parameter = { $ref?: string; name: string; in: string };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema: Schema }> };
};
type Spec = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; parameters: Record<string, Parameter> };
};

let spec: Spec | undefined;
let routes: { method: string; template: string; regex: RegExp; literal: number; op: Operation }[] | undefined;

function load() {
  if (!spec) {
    const require = createRequire(import.meta.url);
    const file = require.resolve('@octokit/openapi/generated/api.github.com.json');
    spec = JSON.parse(readFileSync(file, 'utf8')) as Spec;
    routes = [];
    for (const [template, ops] of Object.entries(spec.paths)) {
      const regex = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const literal = template.split('/').filter((s) => s && !s.startsWith('{')).length;
      for (const [method, op] of Object.entries(ops)) {
        if (typeof op === 'object' && op && 'operationId' in op) {
          routes.push({ method: method.toUpperCase(), template, regex, literal, op });
        }
      }
    }
    // The most literal template wins: /repos/{o}/{r}/check-runs before /repos/{o}/{r}/{x}.
    routes.sort((a, b) => b.literal - a.literal);
  }
  return { spec, routes: routes! };
}

const deref = <T extends { $ref?: string }>(node: T, s: Spec): T => {
  if (!node.$ref) return node;
  const [, , kind, name] = node.$ref.split('/');
  const target = (s.components as Record<string, Record<string, unknown>>)[kind!]![name!] as T;
  return deref(target, s);
};

export interface GitHubCall {
  method: string;
  /** Path without the query string, e.g. `/repos/o/r/check-runs`. */
  path: string;
  query?: URLSearchParams;
  body?: unknown;
}

/** The operation's id (`checks/create`), or throws with what is wrong with the call. */
export function checkGitHubCall(call: GitHubCall): string {
  const { spec: s, routes: all } = load();
  const path = call.path.replace(/^\/api\/v3/, '');
  const route = all.find((r) => r.method === call.method.toUpperCase() && r.regex.test(path));
  if (!route) throw new Error(`${call.method} ${path} is not an operation of GitHub's REST API`);
  const params = (route.op.parameters ?? []).map((p) => deref(p, s));
  for (const key of call.query?.keys() ?? []) {
    if (!params.some((p) => p.in === 'query' && p.name === key)) {
      throw new Error(`${route.op.operationId}: unknown query parameter "${key}"`);
    }
  }
  const schema = route.op.requestBody?.content?.['application/json']?.schema;
  if (call.body !== undefined && call.body !== null && schema) {
    const problems = checkValue(deref(schema, s), call.body, 'body', s);
    if (problems.length) throw new Error(`${route.op.operationId}: ${problems.join('; ')}`);
  }
  return route.op.operationId;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function checkValue(schema: Schema, value: unknown, where: string, s: Spec): string[] {
  const own = checkOwn(schema, value, where, s);
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives) {
    const results = alternatives.map((alt) => checkValue(deref(alt, s), value, where, s));
    if (!results.some((r) => r.length === 0)) own.push(...results[0]!);
  }
  if (schema.allOf) own.push(...schema.allOf.flatMap((part) => checkValue(deref(part, s), value, where, s)));
  return own;
}

function checkOwn(schema: Schema, value: unknown, where: string, s: Spec): string[] {
  if (value === null)
    return schema.nullable || (Array.isArray(schema.type) && schema.type.includes('null'))
      ? []
      : [`${where} may not be null`];
  if (schema.enum && !schema.enum.includes(value))
    return [`${where} must be one of ${schema.enum.join(', ')}, got ${JSON.stringify(value)}`];
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const actual = typeOf(value);
  if (types.length && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
    return [`${where} must be ${types.join(' or ')}, got ${actual}`];
  }
  if (actual === 'object' && schema.properties) {
    const obj = value as Record<string, unknown>;
    const problems = (schema.required ?? [])
      .filter((k) => obj[k] === undefined)
      .map((k) => `${where}.${k} is required`);
    for (const [k, v] of Object.entries(obj)) {
      const prop = schema.properties[k];
      if (!prop) {
        if (schema.additionalProperties === undefined || schema.additionalProperties === false) {
          problems.push(`${where}.${k} is not a known field`);
        }
        continue;
      }
      if (v !== undefined) problems.push(...checkValue(deref(prop, s), v, `${where}.${k}`, s));
    }
    return problems;
  }
  return [];
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkGitHubCall, type GitHubCall } from './github-openapi.ts';

export interface RecordedCall extends GitHubCall {
  operationId: string | null;
  /** Why GitHub's OpenAPI description rejects the call, if it does. */
  violation: string | null;
}

type Handler = (
  call: {
    params: Record<string, string>;
    query: URLSearchParams;
    body: any;
    path: string;
    headers: IncomingMessage['headers'];
  },
  api: GitHubApi,
) => { status?: number; body?: unknown; headers?: Record<string, string> } | undefined;

export interface GitHubApi {
  /** Base URL to give Octokit (`baseUrl`) or the Action (`GITHUB_API_URL`). */
  url: string;
  calls: RecordedCall[];
  /** Calls GitHub's description rejects: a test should end with this empty. */
  violations(): string[];
  /** Answers `method path-template` (`POST /repos/{owner}/{repo}/check-runs`) with `handler`. */
  on(route: string, handler: Handler): void;
  /** Awaited before each call is answered: tests slow GitHub down, hold a call, or fail it. */
  before?:
    | ((call: { method: string; path: string }) => Promise<{ status: number; body: unknown } | void>)
    | undefined;
  /** In-memory GitHub state the default handlers keep. */
  state: {
    comments: { id: number; issue: number; body: string; user: { login: string; type: string } }[];
    checkRuns: {
      id: number;
      name: string;
      head_sha: string;
      status: string;
      conclusion: string | null;
      external_id?: string;
      output?: unknown;
      [k: string]: unknown;
    }[];
    deployments: {
      id: number;
      ref: string;
      environment: string;
      payload?: unknown;
      transient_environment?: boolean;
      production_environment?: boolean;
      statuses: { state: string; environment_url?: string; log_url?: string; description?: string }[];
    }[];
  };
  stop(): Promise<void>;
}

let nextId = 1000;

/**
 * A local stand-in for api.github.com on 127.0.0.1. Every call is checked against GitHub's
 * OpenAPI description and recorded; comments, check runs and deployments are kept in memory
 * so that code which reads back what it wrote (sticky comments) behaves as against GitHub.
 */
export async function createGitHubApi(
  opts: {
    /** Answers requests outside `/api/v3` (git's smart HTTP, say), as GitHub Enterprise Server's host does. */
    web?: (req: IncomingMessage, res: ServerResponse) => void;
  } = {},
): Promise<GitHubApi> {
  const routes: { method: string; regex: RegExp; names: string[]; handler: Handler }[] = [];
  const api: GitHubApi = {
    url: '',
    stop: async () => undefined,
    calls: [] as RecordedCall[],
    state: { comments: [], checkRuns: [], deployments: [] },
    violations: () =>
      api.calls.filter((c) => c.violation).map((c) => `${c.method} ${c.path}: ${c.violation}`),
    on(route: string, handler: Handler) {
      const [method, template] = route.split(' ') as [string, string];
      const names: string[] = [];
      const regex = new RegExp(
        `^${template.replace(/\{([^}]+)\}/g, (_, n: string) => {
          names.push(n);
          return '([^/]+)';
        })}$`,
      );
      // Later registrations win, so tests can override the defaults.
      routes.unshift({ method, regex, names, handler });
    },
  };

  registerDefaults(api);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (opts.web && !(req.url ?? '/').startsWith('/api/v3/')) return opts.web(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const method = req.method ?? 'GET';
      const path = url.pathname.replace(/^\/api\/v3/, '');
      let operationId: string | null = null;
      let violation: string | null = null;
      try {
        operationId = checkGitHubCall({ method, path, query: url.searchParams, body });
      } catch (err) {
        violation = (err as Error).message;
      }
      api.calls.push({ method, path, query: url.searchParams, body, operationId, violation });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
        res.end(payload === undefined ? '' : JSON.stringify(payload));
      };
      if (violation) return send(422, { message: `Validation Failed (stand-in): ${violation}` });
      const early = api.before ? await api.before({ method, path }) : undefined;
      if (early) return send(early.status, early.body);
      for (const r of routes) {
        if (r.method !== method) continue;
        const m = r.regex.exec(path);
        if (!m) continue;
        const params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
        const out = r.handler({ params, query: url.searchParams, body, path, headers: req.headers }, api);
        if (out) return send(out.status ?? 200, out.body, out.headers);
      }
      send(404, {
        message: 'Not Found (no stand-in handler)',
        documentation_url: 'https://docs.github.com/rest',
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}

function registerDefaults(api: GitHubApi) {
  const s = api.state;
  api.on('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', ({ params }) => ({
    body: s.comments.filter((c) => c.issue === Number(params.issue_number)),
  }));
  api.on('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', ({ params, body }) => {
    const c = {
      id: nextId++,
      issue: Number(params.issue_number),
      body: body.body,
      user: { login: 'slipway[bot]', type: 'Bot' },
    };
    s.comments.push(c);
    return { status: 201, body: c };
  });
  api.on('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', ({ params, body }) => {
    const c = s.comments.find((x) => x.id === Number(params.comment_id));
    if (!c) return { status: 404, body: { message: 'Not Found' } };
    c.body = body.body;
    return { body: c };
  });
  api.on('POST /repos/{owner}/{repo}/check-runs', ({ body }) => {
    const run = { id: nextId++, status: 'queued', conclusion: null, ...body };
    s.checkRuns.push(run);
    return { status: 201, body: run };
  });
  api.on('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', ({ params, body }) => {
    const run = s.checkRuns.find((r) => r.id === Number(params.check_run_id));
    if (!run) return { status: 404, body: { message: 'Not Found' } };
    Object.assign(run, body, body.conclusion ? { status: 'completed' } : {});
    return { body: run };
  });
  api.on('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', ({ params, query }) => {
    const runs = s.checkRuns.filter(
      (r) => r.head_sha === params.ref && (!query.get('check_name') || r.name === query.get('check_name')),
    );
    return { body: { total_count: runs.length, check_runs: runs } };
  });
  api.on('POST /repos/{owner}/{repo}/deployments', ({ body }) => {
    const d = { id: nextId++, statuses: [], ...body };
    s.deployments.push(d);
    return { status: 201, body: d };
  });
  api.on('GET /repos/{owner}/{repo}/deployments', ({ query }) => ({
    body: s.deployments.filter(
      (d) =>
        (!query.get('environment') || d.environment === query.get('environment')) &&
        (!query.get('ref') || d.ref === query.get('ref')),
    ),
  }));
  api.on('POST /repos/{owner}/{repo}/deployments/{deployment_id}/statuses', ({ params, body }) => {
    const d = s.deployments.find((x) => x.id === Number(params.deployment_id));
    if (!d) return { status: 404, body: { message: 'Not Found' } };
    d.statuses.push(body);
    return { status: 201, body: { id: nextId++, ...body } };
  });
}

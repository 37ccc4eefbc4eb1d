import { deployHooksApi } from './deploy-hooks.ts';
import { protectionApi } from './protection.ts';
import { deploymentsApi } from './deployments.ts';
import { domainsApi } from './domains.ts';
import { createCaller, readJson, readText } from './envelope.ts';
import { envApi } from './env.ts';
import { createHttp, type RequestOptions } from './http.ts';
import type {
  AlertsQueryInput,
  DeploymentsQueryInput,
  EnvListQueryInput,
  PageInput,
  ProjectsQueryInput,
} from './inputs.ts';
import { monitoringApi } from './monitoring.ts';
import type { ClientOptions } from './options.ts';
import { organizationsApi } from './organizations.ts';
import { type Page, paginate } from './pagination.ts';
import { projectsApi } from './projects.ts';
import type { RateLimit } from './rate-limit.ts';
import { uploadsApi } from './uploads.ts';
import { userApi } from './user.ts';
import { webhooksApi } from './webhooks.ts';
import { githubEventsApi } from './github-events.ts';
import { oidcApi } from './oidc.ts';

/** The answer of `client.request`: the body is parsed JSON when the server sent JSON, else text. */
export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * Walks every page of a list method from the page `q` asks for (`page` or `cursor`), then by
 * each page's `meta.next`.
 */
const walk = <Q extends { page?: number; cursor?: string }, T>(q: Q, list: (q: Q) => Promise<Page<T>>) =>
  paginate((cursor) => list(cursor === undefined ? q : { ...q, page: undefined, cursor }));

/**
 * A typed client of the Slipway API (`/v1`). Every method unwraps the envelope and checks the
 * answer against the contract's zod schema; every failure is thrown as an `ApiError`.
 */
export function createClient(options: ClientOptions) {
  const http = createHttp(options);
  const c = createCaller(http);
  const user = userApi(c);
  const projects = projectsApi(c);
  const deployments = deploymentsApi(c, http);
  const domains = domainsApi(c);
  const env = envApi(c);
  const organizations = organizationsApi(c);
  const monitoring = monitoringApi(c);
  const webhooks = webhooksApi(c);
  const deployHooks = deployHooksApi(c);
  const protection = protectionApi(c);
  const uploads = uploadsApi(c);
  const githubEvents = githubEventsApi(c);
  const oidc = oidcApi(c);

  return {
    user,
    projects,
    deployments,
    domains,
    env,
    organizations,
    monitoring,
    webhooks,
    /** Secret URLs that deploy a branch's head (for a CMS or a cron). */
    deployHooks,
    /** Preview protection's bypass secret and share links. */
    protection,
    uploads,
    /** The GitHub App's durable queue of GitHub deliveries. */
    githubEvents,
    /** Keyless deploys from GitHub Actions. */
    oidc,
    /** Async iterators over every item of a list, fetching page after page. */
    iterate: {
      tokens: (q: PageInput = {}) => walk(q, (q) => user.tokens.list(q)),
      projects: (q: ProjectsQueryInput = {}) => walk(q, (q) => projects.list(q)),
      deployments: (projectId: string, q: DeploymentsQueryInput = {}) =>
        walk(q, (q) => deployments.list(projectId, q)),
      domains: (projectId: string, q: PageInput = {}) => walk(q, (q) => domains.list(projectId, q)),
      env: (projectId: string, q: EnvListQueryInput = {}) => walk(q, (q) => env.list(projectId, q)),
      organizations: (q: PageInput = {}) => walk(q, (q) => organizations.list(q)),
      members: (orgId: string, q: PageInput = {}) => walk(q, (q) => organizations.members.list(orgId, q)),
      alerts: (projectId: string, q: AlertsQueryInput = {}) =>
        walk(q, (q) => monitoring.alerts(projectId, q)),
      webhooks: (projectId: string, q: PageInput = {}) => walk(q, (q) => webhooks.list(projectId, q)),
      deployHooks: (projectId: string, q: PageInput = {}) => walk(q, (q) => deployHooks.list(projectId, q)),
      shareLinks: (projectId: string, q: PageInput = {}) => walk(q, (q) => protection.links(projectId, q)),
      deliveries: (projectId: string, webhookId: string, q: PageInput = {}) =>
        walk(q, (q) => webhooks.deliveries(projectId, webhookId, q)),
    },
    /**
     * Any request, with the same auth, retries, Idempotency-Key and error handling; the body is
     * not unwrapped or checked. `path` includes the version, e.g. `/v1/projects`.
     */
    async request(method: string, path: string, opts: RequestOptions = {}): Promise<RawResponse> {
      const { status, headers, value } = await http.exchange(method, path, opts, async (res, what) =>
        (res.headers.get('content-type') ?? '').includes('json') ? readJson(res, what) : readText(res, what),
      );
      return { status, headers, body: value };
    },
    /** `X-RateLimit-*` of the last response that carried them; null before the first. */
    get rateLimit(): RateLimit | null {
      return http.rateLimit;
    },
  };
}

export type SlipwayClient = ReturnType<typeof createClient>;

export { ApiError } from '../errors.ts';
export type { CallOptions, RequestOptions, QueryValue } from './http.ts';
export type { ClientOptions, FetchLike } from './options.ts';
export type { PaymentChallenge, PaymentRequiredHandler } from './payment.ts';
export { ledgerPayer, type LedgerPayerOptions } from './ledger-payer.ts';
export type { RateLimit } from './rate-limit.ts';
export type { LogEvent, FollowOptions } from './follow-logs.ts';
export type { Page, PageFetcher } from './pagination.ts';
export { paginate, collect } from './pagination.ts';
export { parseSse, type SseEvent } from './sse.ts';
export type * from './inputs.ts';
export type { JsonExportQuery, TextExportQuery } from './env.ts';

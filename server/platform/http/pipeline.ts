import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { UPLOAD_GRANT_HEADER } from '../../../api/schemas/uploads.ts';
import type { PlanName } from '../../core/plan-limits.ts';
import type { Actor, Deps } from '../deps/deps.ts';
import { readUploadGrant } from './upload-grant.ts';
import { authenticate } from './auth.ts';
import { consumeRateLimit, peekRateLimit, type RateLimitState } from './rate-limit.ts';
import { rateLimitMessage } from './rate-limit-message.ts';
import type { Deprecation, RouteSpec } from './route-spec.ts';
import { checkScope } from './scope.ts';

/**
 * The hooks of an API route, in Fastify's order: `onRequest` names the caller (before the body
 * is read), the schema compilers check the input, `preHandler` charges the rate limit (a request
 * refused as invalid is not charged) and claims an Idempotency-Key (server/platform/http/idempotency.ts),
 * then the handler runs and its answer is serialised by its schema.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling: set by `authenticateRequest`; the system actor on open routes. */
    actor: Actor;
    /** Requests per hour the caller's token allows. */
    hourlyLimit: number;
    /** The plan that limit comes from. */
    hourlyPlan: PlanName;
  }
}

export const SYSTEM_ACTOR: Actor = { userId: '', email: '', tokenId: '' };

/**
 * onRequest: the bearer token names the caller; a workflow's token is held to its one project;
 * a route of the GitHub App's (its event queue) takes only the App's own token.
 */
export const authenticateRequest =
  (deps: Deps, spec: Pick<RouteSpec, 'method' | 'url' | 'scoped' | 'githubApp'>) =>
  async (req: FastifyRequest) => {
    const { actor, hourlyLimit, hourlyPlan } = await authenticate(deps, req.headers.authorization);
    req.actor = actor;
    req.hourlyLimit = hourlyLimit;
    req.hourlyPlan = hourlyPlan;
    if (actor.scope) await checkScope(deps, actor.scope, spec, req.params);
    if (spec.githubApp && !actor.githubApp) {
      // Refused here, before the body is read: a stranger cannot make the service take in 25 MB.
      throw ApiError.forbidden(
        `Only the GitHub App's own token may use ${spec.method} ${spec.url}: this token is not one. The operator makes it with \`slipway token create --email <bot user> --name github-app --github-app\` and gives it to the bot as SLIPWAY_API_TOKEN (docs/bot.md)`,
      );
    }
  };

/**
 * preHandler: counts the request in the caller's hourly window, and says what is left. A path
 * naming a project has it read at the same time, with the count (see rate-limit.ts). An upload
 * carrying an upload grant with uses left counts against the grant instead.
 */
export const chargeRateLimit =
  (deps: Deps, spec: Pick<RouteSpec, 'uploadGrant'>) => async (req: FastifyRequest, reply: FastifyReply) => {
    const projectId = (req.params as { projectId?: string } | undefined)?.projectId;
    if (spec.uploadGrant && projectId !== undefined && (await coveredByGrant(deps, req, projectId))) {
      showRateLimit(reply, await peekRateLimit(deps, req.actor.userId, req.hourlyLimit));
      return;
    }
    const rl = await consumeRateLimit(deps, req.actor.userId, req.hourlyLimit, projectId);
    if (projectId !== undefined && rl.project !== undefined) {
      req.actor.preloadedProject = { projectId, row: rl.project };
    }
    showRateLimit(reply, rl);
    if (!rl.allowed) {
      const wait = Math.max(1, rl.reset - Math.floor(deps.clock.now().getTime() / 1000));
      void reply.header('Retry-After', wait);
      throw new ApiError(
        'RATE_LIMIT_EXCEEDED',
        rateLimitMessage(deps.config, req.hourlyPlan, rl.limit, wait),
      );
    }
  };

const showRateLimit = (reply: FastifyReply, rl: RateLimitState) => {
  void reply.header('X-RateLimit-Limit', rl.limit);
  void reply.header('X-RateLimit-Remaining', rl.remaining);
  void reply.header('X-RateLimit-Reset', rl.reset);
};

/** Whether the request's upload grant takes this upload (a malformed or foreign one is refused). */
async function coveredByGrant(deps: Deps, req: FastifyRequest, projectId: string): Promise<boolean> {
  const header = req.headers[UPLOAD_GRANT_HEADER.toLowerCase()];
  if (typeof header !== 'string' || header === '') return false;
  const bucket = readUploadGrant(deps, header, req.actor.userId, projectId);
  if (!bucket) return false;
  const { count } = await deps.rateCounts.take(bucket.key, bucket.windowStart, bucket.files);
  return count !== null;
}

/** onRequest: a deprecated operation says so, with its end and successor, on every answer. */
export const announceDeprecation = (d: Deprecation) => async (_req: FastifyRequest, reply: FastifyReply) => {
  void reply.header('Deprecation', `@${Math.floor(d.since.getTime() / 1000)}`);
  void reply.header('Sunset', d.sunset.toUTCString());
  void reply.header('Link', `<${d.successor}>; rel="deprecation"`);
};

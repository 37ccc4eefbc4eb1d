import { sql } from 'kysely';
import { ApiError } from '../../../api/errors.ts';
import type { Actor, Deps } from '../deps/deps.ts';
import type { PlanName } from '../../core/plan-limits.ts';
import type { CachedToken } from '../deps/token-cache.ts';
import { prepared } from '../store/prepared.ts';
import { hashToken } from '../../core/api-token.ts';

const TOKEN_SHAPE = /^slw_[A-Za-z0-9_-]{32,}$/;

export interface Authenticated {
  actor: Actor;
  /** Requests per hour for this token: the best plan among the owner's organizations. */
  hourlyLimit: number;
  /** That plan. */
  hourlyPlan: PlanName;
}

const PLAN_RANK = sql<number>`case o.plan when 'enterprise' then 3 when 'pro' then 2 else 1 end`;

/** Runs on every request: built once per store (see server/platform/store/prepared.ts). */
const tokenLookup = prepared<
  [string],
  {
    tokenId: string;
    userId: string;
    email: string;
    lastUsedAt: string | null;
    rank: number | null;
    projectId: string | null;
    scopeRole: 'viewer' | 'developer' | null;
    expiresAt: string | null;
    source: 'user' | 'oidc' | 'github_app';
  }
>(1, (d, tokenHash) =>
  d
    .selectFrom('tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .select([
      't.id as tokenId',
      'u.id as userId',
      'u.email as email',
      't.last_used_at as lastUsedAt',
      't.project_id as projectId',
      't.scope_role as scopeRole',
      't.expires_at as expiresAt',
      't.source as source',
      (eb) =>
        eb
          .selectFrom('memberships as m')
          .innerJoin('organizations as o', 'o.id', 'm.organization_id')
          .select(sql<number>`max(${PLAN_RANK})`.as('rank'))
          .whereRef('m.user_id', '=', 'u.id')
          .as('rank'),
    ])
    .where('t.token_hash', '=', tokenHash)
    .where('t.revoked_at', 'is', null),
);

/** Resolves `Authorization: Bearer slw_...`; anything else is UNAUTHORIZED. */
export async function authenticate(deps: Deps, header: string | undefined): Promise<Authenticated> {
  if (!header) {
    throw new ApiError('UNAUTHORIZED', 'Missing API token: send "Authorization: Bearer <token>"');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match || !TOKEN_SHAPE.test(match[1]!)) {
    throw new ApiError('UNAUTHORIZED', 'Malformed API token: expected "Authorization: Bearer slw_..."');
  }
  const tokenHash = hashToken(match[1]!);
  let token = deps.tokens.get(tokenHash);
  if (!token) {
    const [row] = await deps.store.run(tokenLookup, tokenHash);
    if (!row) throw new ApiError('UNAUTHORIZED', 'Unknown or revoked API token');
    token = { ...row, rank: Number(row.rank ?? 1) };
    deps.tokens.set(tokenHash, token);
  }
  if (token.expiresAt && Date.parse(token.expiresAt) <= deps.clock.now().getTime()) {
    throw new ApiError(
      'UNAUTHORIZED',
      'This token from a GitHub Actions trust policy has expired: exchange a new OIDC token',
    );
  }
  const { rank } = token;
  const hourlyPlan: PlanName = rank === 3 ? 'enterprise' : rank === 2 ? 'pro' : 'free';
  const hourlyLimit = rank === 3 ? deps.config.enterpriseRateLimit : rank === 2 ? 1000 : 100;
  await touchToken(deps, token);
  const scope =
    token.projectId && token.scopeRole ? { projectId: token.projectId, role: token.scopeRole } : undefined;
  return {
    actor: {
      tokenId: token.tokenId,
      userId: token.userId,
      email: token.email,
      ...(scope ? { scope } : {}),
      ...(token.source === 'github_app' ? { githubApp: true as const } : {}),
    },
    hourlyLimit,
    hourlyPlan,
  };
}

/** `lastUsedAt` is kept to the minute: a write on every request would cost throughput for nothing. */
async function touchToken(deps: Deps, token: CachedToken) {
  const now = deps.clock.now();
  if (token.lastUsedAt && now.getTime() - Date.parse(token.lastUsedAt) < 60_000) return;
  token.lastUsedAt = now.toISOString();
  await deps.db
    .updateTable('tokens')
    .set({ last_used_at: token.lastUsedAt })
    .where('id', '=', token.tokenId)
    .execute();
}

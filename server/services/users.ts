import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ApiError } from '../../api/errors.ts';
import type { PageQuery } from '../../api/schemas/common.ts';
import type { CreatedToken, TokenSummary, User } from '../../api/schemas/user.ts';
import { hashToken, TOKEN_PREFIX } from '../http/auth.ts';
import { newId, randomString } from '../lib/ids.ts';
import type { Database } from '../store/schema.ts';
import type { Actor, Deps } from './deps.ts';
import { readPage, type ListPage } from './pagination.ts';

/** A free organization name derived from the e-mail's local part. */
async function personalOrgName(db: Kysely<Database>, email: string): Promise<string> {
  const base =
    email
      .split('@')[0]!
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 50) || 'user';
  for (const candidate of [base, `${base}-${randomString(6)}`, `${base}-${randomString(10)}`]) {
    const taken = await db
      .selectFrom('organizations')
      .select('id')
      .where('name', '=', candidate)
      .executeTakeFirst();
    if (!taken) return candidate;
  }
  return `user-${randomString(16)}`;
}

/**
 * Finds or creates a user by e-mail. A new user gets a personal organization (plan free, owner)
 * and every invitation waiting for that e-mail takes effect.
 */
export async function findOrCreateUser(
  deps: Deps,
  rawEmail: string,
): Promise<{ id: string; email: string; created: boolean }> {
  const email = rawEmail.trim().toLowerCase();
  return deps.db.transaction().execute(async (tx) => {
    const existing = await tx
      .selectFrom('users')
      .select(['id', 'email'])
      .where('email', '=', email)
      .executeTakeFirst();
    if (existing) return { ...existing, created: false };
    const now = deps.clock.now().toISOString();
    const userId = newId('usr');
    await tx.insertInto('users').values({ id: userId, email, created_at: now }).execute();
    const orgId = newId('org');
    await tx
      .insertInto('organizations')
      .values({
        id: orgId,
        name: await personalOrgName(tx, email),
        display_name: `${email.split('@')[0]}'s projects`,
        plan: deps.config.defaultPlan,
        personal_user_id: userId,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await tx
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: orgId,
        email,
        user_id: userId,
        role: 'owner',
        invited_at: now,
        joined_at: now,
      })
      .execute();
    await tx
      .updateTable('memberships')
      .set({ user_id: userId, joined_at: now })
      .where('email', '=', email)
      .where('user_id', 'is', null)
      .execute();
    return { id: userId, email, created: true };
  });
}

/** Issues a new token; the plaintext is returned here only. */
export async function createToken(
  deps: Deps,
  userId: string,
  name: string,
  scope?: { projectId: string; role: 'viewer' | 'developer'; expiresAt: string },
): Promise<CreatedToken> {
  const token = `${TOKEN_PREFIX}${randomBytes(30).toString('base64url')}`;
  const id = newId('tok');
  const createdAt = deps.clock.now().toISOString();
  await deps.db
    .insertInto('tokens')
    .values({
      id,
      user_id: userId,
      name,
      token_hash: hashToken(token),
      prefix: token.slice(0, 10),
      created_at: createdAt,
      last_used_at: null,
      revoked_at: null,
      ...(scope
        ? {
            source: 'oidc' as const,
            project_id: scope.projectId,
            scope_role: scope.role,
            expires_at: scope.expiresAt,
          }
        : {}),
    })
    .execute();
  return { id, name, token, createdAt };
}

export async function listTokens(deps: Deps, actor: Actor, q: PageQuery): Promise<ListPage<TokenSummary>> {
  const base = deps.db
    .selectFrom('tokens')
    .where('user_id', '=', actor.userId)
    .where('revoked_at', 'is', null)
    // Tokens exchanged for a workflow's OIDC token are nobody's to list or reuse.
    .where('source', '=', 'user');
  const page = await readPage(base.selectAll(), base, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
  return {
    ...page,
    items: page.items.map((r) => ({
      id: r.id,
      name: r.name,
      prefix: r.prefix,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
    })),
  };
}

export async function revokeToken(deps: Deps, actor: Actor, tokenId: string): Promise<void> {
  const res = await deps.db
    .updateTable('tokens')
    .set({ revoked_at: deps.clock.now().toISOString() })
    .where('id', '=', tokenId)
    .where('user_id', '=', actor.userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw ApiError.notFound(`Token ${tokenId}`);
  deps.tokens.invalidate();
}

export async function getUser(deps: Deps, actor: Actor): Promise<User> {
  const orgs = await deps.db
    .selectFrom('memberships as m')
    .innerJoin('organizations as o', 'o.id', 'm.organization_id')
    .select(['o.id', 'o.name', 'm.role', 'o.plan'])
    .where('m.user_id', '=', actor.userId)
    .orderBy('o.created_at')
    .orderBy('o.id')
    .execute();
  return { id: actor.userId, email: actor.email, organizations: orgs };
}

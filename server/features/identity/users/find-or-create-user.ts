import type { Kysely } from 'kysely';
import { newId, randomString } from '../../../core/ids.ts';
import type { Database } from '../../../platform/store/schema.ts';
import type { Deps } from '../../../platform/deps/deps.ts';

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

import { newId } from '../../server/core/ids.ts';
import type { TestApp, TestUser } from './app.ts';

export type TestRole = 'owner' | 'admin' | 'developer' | 'viewer';

/** Makes `user` an active member of `orgId` with `role`, straight in the database. */
export async function addMember(t: TestApp, orgId: string, user: TestUser, role: TestRole): Promise<void> {
  const now = t.deps.clock.now().toISOString();
  await t.deps.db
    .insertInto('memberships')
    .values({
      id: newId('mem'),
      organization_id: orgId,
      email: user.email,
      user_id: user.userId,
      role,
      invited_at: now,
      joined_at: now,
    })
    .execute();
}

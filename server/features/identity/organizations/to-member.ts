import type { Selectable } from 'kysely';
import type { Member } from '../../../../api/schemas/organizations.ts';
import type { MembershipsTable } from '../../../platform/store/schema.ts';

export type MembershipRow = Selectable<MembershipsTable>;

/** A membership is `active` once a user holds it, else an `invited` e-mail waiting for its user. */
export function toMember(row: MembershipRow): Member {
  return {
    email: row.email,
    role: row.role,
    status: row.user_id ? 'active' : 'invited',
    invitedAt: row.invited_at,
    joinedAt: row.joined_at,
  };
}

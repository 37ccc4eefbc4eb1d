import type { z } from 'zod';
import { organizations } from '../routes/organizations.ts';
import type {
  CreateOrganizationBody,
  InviteMemberBody,
  UpdateMemberBody,
  UpdateOrganizationBody,
} from '../schemas/organizations.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

/** Organizations and their members; `orgId` takes the id or the name. */
export function organizationsApi(c: Caller) {
  return {
    /** The caller's organizations, newest first. */
    list: (query: PageInput = {}, o?: CallOptions) => c.call(organizations.list, {}, { ...o, query }),
    /** Creates an organization (201); the caller becomes its owner. */
    create: (body: z.input<typeof CreateOrganizationBody>, o?: CallOptions) =>
      c.call(organizations.create, {}, { ...o, body }),
    get: (orgId: string, o?: CallOptions) => c.call(organizations.get, { orgId }, o),
    /** What it keeps against its plan's quotas: stored uploads and build caches (extension). */
    usage: (orgId: string, o?: CallOptions) => c.call(organizations.usage, { orgId }, o),
    /** Changes name, displayName or plan (admin and up). */
    update: (orgId: string, body: z.input<typeof UpdateOrganizationBody>, o?: CallOptions) =>
      c.call(organizations.update, { orgId }, { ...o, body }),
    members: {
      list: (orgId: string, query: PageInput = {}, o?: CallOptions) =>
        c.call(organizations.members, { orgId }, { ...o, query }),
      /** Invites by e-mail (201); `active` at once when the user exists, else `invited`. */
      invite: (orgId: string, body: z.input<typeof InviteMemberBody>, o?: CallOptions) =>
        c.call(organizations.invite, { orgId }, { ...o, body }),
      /** Changes a member's role (extension). */
      update: (orgId: string, email: string, body: z.input<typeof UpdateMemberBody>, o?: CallOptions) =>
        c.call(organizations.updateMember, { orgId, email }, { ...o, body }),
      /** Removes a member or cancels an invitation; the last owner cannot be removed. */
      remove: (orgId: string, email: string, o?: CallOptions) =>
        c.call(organizations.removeMember, { orgId, email }, o),
    },
  };
}

import type { z } from 'zod';
import {
  type CreateOrganizationBody,
  type InviteMemberBody,
  Member,
  Organization,
  OrganizationUsage,
  type UpdateMemberBody,
  type UpdateOrganizationBody,
} from '../schemas/organizations.ts';
import { type Caller, seg } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

const org = (orgId: string) => `/v1/organizations/${seg(orgId)}`;

/** Organizations and their members; `orgId` takes the id or the name. */
export function organizationsApi(c: Caller) {
  return {
    /** The caller's organizations, newest first. */
    list: (query: PageInput = {}, o?: CallOptions) =>
      c.list(Organization, '/v1/organizations', { ...o, query }),
    /** Creates an organization (201); the caller becomes its owner. */
    create: (body: z.input<typeof CreateOrganizationBody>, o?: CallOptions) =>
      c.data(Organization, 'POST', '/v1/organizations', { ...o, body }),
    get: (orgId: string, o?: CallOptions) => c.data(Organization, 'GET', org(orgId), o),
    /** What it keeps against its plan's quotas: stored uploads and build caches (extension). */
    usage: (orgId: string, o?: CallOptions) => c.data(OrganizationUsage, 'GET', `${org(orgId)}/usage`, o),
    /** Changes name, displayName or plan (admin and up). */
    update: (orgId: string, body: z.input<typeof UpdateOrganizationBody>, o?: CallOptions) =>
      c.data(Organization, 'PATCH', org(orgId), { ...o, body }),
    members: {
      list: (orgId: string, query: PageInput = {}, o?: CallOptions) =>
        c.list(Member, `${org(orgId)}/members`, { ...o, query }),
      /** Invites by e-mail (201); `active` at once when the user exists, else `invited`. */
      invite: (orgId: string, body: z.input<typeof InviteMemberBody>, o?: CallOptions) =>
        c.data(Member, 'POST', `${org(orgId)}/members/invite`, { ...o, body }),
      /** Changes a member's role (extension). */
      update: (orgId: string, email: string, body: z.input<typeof UpdateMemberBody>, o?: CallOptions) =>
        c.data(Member, 'PATCH', `${org(orgId)}/members/${seg(email)}`, { ...o, body }),
      /** Removes a member or cancels an invitation; the last owner cannot be removed. */
      remove: (orgId: string, email: string, o?: CallOptions) =>
        c.deleted(`${org(orgId)}/members/${seg(email)}`, o),
    },
  };
}

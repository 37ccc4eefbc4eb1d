import {
  CreateOrganizationBody,
  InviteMemberBody,
  ListOrganizationsQuery,
  Member,
  MemberParams,
  Organization,
  OrganizationParams,
  OrganizationUsage,
  UpdateMemberBody,
  UpdateOrganizationBody,
} from '../../api/schemas/organizations.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { createOrganization } from '../services/organizations/create-organization.ts';
import { getOrganization } from '../services/organizations/get-organization.ts';
import { getUsage } from '../services/organizations/get-usage.ts';
import { inviteMember } from '../services/organizations/invite-member.ts';
import { listMembers } from '../services/organizations/list-members.ts';
import { listOrganizations } from '../services/organizations/list-organizations.ts';
import { removeMember } from '../services/organizations/remove-member.ts';
import { updateMember } from '../services/organizations/update-member.ts';
import { updateOrganization } from '../services/organizations/update-organization.ts';

export const organizationRoutes = [
  route({
    method: 'GET',
    url: '/v1/organizations',
    tag: 'organizations',
    summary: "The caller's organizations, newest first",
    query: ListOrganizationsQuery,
    response: Organization,
    responseKind: 'list',
    handler: async ({ deps, actor, query }) => {
      const page = await listOrganizations(deps, actor, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/organizations',
    tag: 'organizations',
    summary: 'Create an organization; the caller becomes its owner',
    body: CreateOrganizationBody,
    response: Organization,
    successStatus: 201,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await createOrganization(deps, actor, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/organizations/:orgId',
    tag: 'organizations',
    summary: 'Get an organization (by id or name)',
    params: OrganizationParams,
    response: Organization,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getOrganization(deps, actor, params.orgId),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/organizations/:orgId/usage',
    tag: 'organizations',
    summary:
      "What the organization keeps against its plan's quotas: stored uploads and build caches (extension)",
    params: OrganizationParams,
    response: OrganizationUsage,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getUsage(deps, actor, params.orgId),
    }),
  }),
  route({
    method: 'PATCH',
    url: '/v1/organizations/:orgId',
    tag: 'organizations',
    summary: 'Update an organization (name, displayName, plan); admin or owner',
    params: OrganizationParams,
    body: UpdateOrganizationBody,
    response: Organization,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await updateOrganization(deps, actor, params.orgId, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/organizations/:orgId/members',
    tag: 'organizations',
    summary: 'List members and pending invitations, newest first',
    params: OrganizationParams,
    query: ListOrganizationsQuery,
    response: Member,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listMembers(deps, actor, params.orgId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/organizations/:orgId/members/invite',
    tag: 'organizations',
    summary: 'Invite a member by e-mail; admin or owner (only an owner invites an owner)',
    params: OrganizationParams,
    body: InviteMemberBody,
    response: Member,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await inviteMember(deps, actor, params.orgId, body),
    }),
  }),
  route({
    method: 'PATCH',
    url: '/v1/organizations/:orgId/members/:email',
    tag: 'organizations',
    summary: "Change a member's role; admin or owner (only an owner grants or changes owner)",
    params: MemberParams,
    body: UpdateMemberBody,
    response: Member,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await updateMember(deps, actor, params.orgId, params.email, body),
    }),
  }),
  route({
    method: 'DELETE',
    url: '/v1/organizations/:orgId/members/:email',
    tag: 'organizations',
    summary: 'Remove a member or cancel an invitation; admin or owner, or the member themselves',
    params: MemberParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await removeMember(deps, actor, params.orgId, params.email);
      return { kind: 'deleted', message: `Member ${params.email} removed from organization ${params.orgId}` };
    },
  }),
];

import { organizations } from '../../../../api/routes/organizations.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { createOrganization } from '../organizations/create-organization.ts';
import { getOrganization } from '../organizations/get-organization.ts';
import { inviteMember } from '../organizations/invite-member.ts';
import { listMembers } from '../organizations/list-members.ts';
import { listOrganizations } from '../organizations/list-organizations.ts';
import { removeMember } from '../organizations/remove-member.ts';
import { updateMember } from '../organizations/update-member.ts';
import { updateOrganization } from '../organizations/update-organization.ts';

export const organizationRoutes = [
  route({
    ...organizations.list,
    handler: async ({ deps, actor, query }) => {
      const page = await listOrganizations(deps, actor, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...organizations.create,
    handler: async ({ deps, actor, body }) => ({
      kind: 'data',
      data: await createOrganization(deps, actor, body),
    }),
  }),
  route({
    ...organizations.get,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getOrganization(deps, actor, params.orgId),
    }),
  }),
  route({
    ...organizations.update,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await updateOrganization(deps, actor, params.orgId, body),
    }),
  }),
  route({
    ...organizations.members,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listMembers(deps, actor, params.orgId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...organizations.invite,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await inviteMember(deps, actor, params.orgId, body),
    }),
  }),
  route({
    ...organizations.updateMember,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await updateMember(deps, actor, params.orgId, params.email, body),
    }),
  }),
  route({
    ...organizations.removeMember,
    handler: async ({ deps, actor, params }) => {
      await removeMember(deps, actor, params.orgId, params.email);
      return { kind: 'deleted', message: `Member ${params.email} removed from organization ${params.orgId}` };
    },
  }),
];

import { versioned } from '../../api/routes/versioned.ts';
import { DeploymentV1, ProjectV1 } from '../../api/schemas/versioned.ts';
import { route } from '../platform/http/route-spec.ts';
import { PAID_OPERATIONS, personalOrganization, runPaid } from '../features/billing/index.ts';
import { createDeployment, checkRepositoryUrl, createProject } from '../features/deployments/index.ts';

/**
 * The versioned description (`/api/v1`): two paid operations, answered without the envelope.
 * Order: authenticate, validate the body (400, never a charge), check the payment (402), then
 * run the operation and the debit in one transaction (201 with Payment-Receipt).
 */
export const apiV1Routes = [
  route({
    ...versioned.createProject,
    handler: async ({ deps, actor, body, req, reply }) => {
      // A body the service would refuse is a 400 before any payment is asked for.
      await checkRepositoryUrl(deps, body.repositoryUrl);
      return runPaid(
        { deps, actor, req, reply, operation: PAID_OPERATIONS.createProject },
        async (settle) => {
          const org = await personalOrganization(deps.db, actor.userId);
          const project = await createProject(deps, actor, { ...body, organizationId: org.id }, settle);
          return ProjectV1.parse({ id: project.id, name: project.name, status: project.status });
        },
      );
    },
  }),
  route({
    ...versioned.createDeployment,
    handler: async ({ deps, actor, body, req, reply }) =>
      runPaid({ deps, actor, req, reply, operation: PAID_OPERATIONS.createDeployment }, async (settle) => {
        const branch = body.branch === undefined ? {} : { branch: body.branch };
        const deployment = await createDeployment(deps, actor, body.projectId, branch, settle);
        return DeploymentV1.parse({ id: deployment.id, status: deployment.status });
      }),
  }),
];

import { deployments } from '../../../../api/routes/deployments.ts';
import { logFrames } from '../log-frames.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { createDeployment } from '../create-deployment.ts';
import { readLogs } from '../deployment-logs.ts';
import { followLogs, parseLastEventId } from '../follow-logs.ts';
import { getDeployment } from '../get-deployment.ts';
import { listDeployments } from '../list-deployments.ts';
import { promoteDeployment } from '../promote-deployment.ts';
import { redeployDeployment } from '../redeploy-deployment.ts';
import { rollbackDeployment } from '../rollback-deployment.ts';

export const deploymentRoutes = [
  route({
    ...deployments.create,
    scoped: 'write',
    bodyLimit: 32 * 1024 * 1024,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createDeployment(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...deployments.list,
    scoped: 'read',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDeployments(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...deployments.get,
    scoped: 'read',
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getDeployment(deps, actor, params.deploymentId),
    }),
  }),
  route({
    ...deployments.logs,
    scoped: 'read',
    handler: async ({ deps, actor, params, query, req }) => {
      if (!query.follow) {
        return { kind: 'data', data: await readLogs(deps, actor, params.deploymentId, query) };
      }
      const afterId = parseLastEventId(req.headers['last-event-id']);
      const events = await followLogs(deps, actor, params.deploymentId, { ...query, afterId });
      return { kind: 'events', events: (signal) => logFrames(events(signal)) };
    },
  }),
  route({
    ...deployments.promote,
    scoped: 'write',
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await promoteDeployment(deps, actor, params.deploymentId),
    }),
  }),
  route({
    ...deployments.rollback,
    scoped: 'write',
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await rollbackDeployment(deps, actor, params.deploymentId, body),
    }),
  }),
  route({
    ...deployments.redeploy,
    scoped: 'write',
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await redeployDeployment(deps, actor, params.deploymentId),
    }),
  }),
];

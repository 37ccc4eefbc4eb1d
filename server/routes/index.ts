import type { RouteSpec } from '../http/route-spec.ts';
import { apiV1Routes } from './api-v1.ts';
import { billingRoutes } from './billing.ts';
import { certificateRoutes } from './certificates.ts';
import { deployHookRoutes } from './deploy-hooks.ts';
import { deploymentRoutes } from './deployments.ts';
import { domainRoutes } from './domains.ts';
import { envRoutes } from './env.ts';
import { githubEventRoutes } from './github-events.ts';
import { trustRoutes } from './trust.ts';
import { monitoringRoutes } from './monitoring.ts';
import { organizationRoutes } from './organizations.ts';
import { projectRoutes } from './projects.ts';
import { protectionRoutes } from './protection.ts';
import { systemRoutes } from './system.ts';
import { uploadRoutes } from './uploads.ts';
import { userRoutes } from './user.ts';
import { webhookRoutes } from './webhooks.ts';

/** Every route of the service, in one list: the server registers it and the OpenAPI description reads it. */
export function allRoutes(): RouteSpec[] {
  const specs: RouteSpec[] = [
    ...userRoutes,
    ...organizationRoutes,
    ...projectRoutes,
    ...deploymentRoutes,
    ...deployHookRoutes,
    ...protectionRoutes,
    ...uploadRoutes,
    ...domainRoutes,
    ...certificateRoutes,
    ...envRoutes,
    ...monitoringRoutes,
    ...webhookRoutes,
    ...billingRoutes,
    ...githubEventRoutes,
    ...trustRoutes,
  ];
  // The versioned description (/api/v1) has its own shapes: it stays out of the /v1 OpenAPI document.
  return [...systemRoutes(() => specs), ...specs, ...apiV1Routes];
}

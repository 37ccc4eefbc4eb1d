import type { RouteSpec } from '../platform/http/route-spec.ts';
import { apiV1Routes } from './api-v1.ts';
import { billingRoutes } from '../features/billing/index.ts';
import { certificateRoutes, domainRoutes, protectionRoutes } from '../features/serving/index.ts';
import {
  deployHookRoutes,
  deploymentRoutes,
  envRoutes,
  projectRoutes,
} from '../features/deployments/index.ts';
import { githubEventRoutes } from '../features/github/index.ts';
import { trustRoutes, organizationRoutes, userRoutes } from '../features/identity/index.ts';
import { monitoringRoutes } from '../features/monitoring/index.ts';
import { systemRoutes } from './system.ts';
import { uploadRoutes } from '../features/uploads/index.ts';
import { webhookRoutes } from '../features/webhooks/index.ts';

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

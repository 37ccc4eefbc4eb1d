import type { FastifyInstance } from 'fastify';
import type { Deps } from '../platform/deps/deps.ts';
import { createKit } from './kit.ts';
import { deploymentRoutes } from './routes/deployments.ts';
import { newProjectRoutes } from './routes/new-project.ts';
import { organizationRoutes } from './routes/organizations.ts';
import { projectRoutes } from './routes/projects.ts';
import { protectionRoutes } from './routes/protection.ts';
import { sessionRoutes } from './routes/session.ts';

/**
 * The web dashboard, served by the API role at `/` (docs/dashboard.md). Pages call the same
 * services as the API with the signed-in user as the actor, so the API's access rules decide what
 * each page shows and allows. Changes are forms that carry the session's CSRF value and must come
 * from this origin.
 */
export function registerDashboard(app: FastifyInstance, deps: Deps): void {
  const kit = createKit(deps);
  void app.register(async (scope) => {
    // Forms only here: the API itself takes JSON.
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_req, body, done) => done(null, new URLSearchParams(body as string)),
    );
    sessionRoutes(scope, kit);
    organizationRoutes(scope, kit);
    newProjectRoutes(scope, kit);
    projectRoutes(scope, kit);
    deploymentRoutes(scope, kit);
    protectionRoutes(scope, kit);
  });
}

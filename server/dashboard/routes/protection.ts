import type { FastifyInstance } from 'fastify';
import { freshResolver, issueProtectionCode } from '../../services/protection/issue-code.ts';
import type { Kit } from '../kit.ts';
import { protectionContinuePage } from '../pages/protection-continue.ts';

/**
 * Sign-in for protected deployments (docs/protection.md): the edge sends a visitor without its
 * cookie here with the page's address; once signed in (kit.page sends them through the sign-in
 * and back), a member of the project's organization goes on to the page's host with a one-time
 * code, which the edge trades for a cookie of that host alone. Anyone else gets a page why not.
 */
export function protectionRoutes(scope: FastifyInstance, kit: Kit): void {
  const resolver = freshResolver(kit.deps);
  scope.get(
    '/protection/sign-in',
    kit.page(async ({ req, view, session }) => {
      const { url } = req.query as { url?: string };
      // The page's own origin, checked to be a protected host of the member's project.
      const location = await issueProtectionCode(kit.deps, resolver, session.actor, url);
      return protectionContinuePage(view, new URL(location).host, location);
    }),
  );
}

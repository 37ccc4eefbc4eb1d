import type { IncomingMessage, ServerResponse } from 'node:http';
import { REVALIDATE } from './cache-control.ts';
import { DEPLOYMENT_HEADER } from '../../../core/edge-headers.ts';
import { withHeaderRules } from '../../../platform/routing/apply-headers.ts';
import type { HeaderMatch, RuleAnswer } from '../../../platform/routing/match-rules.ts';

/**
 * Answers a `_redirects` redirect from the edge: the status, Location, the deployment's name and
 * the `_headers` that match the path. Revalidated rather than cached (browsers keep a 301 for
 * good otherwise), so that a rollback or a new deployment without the rule takes effect at once.
 * Returns the body bytes sent.
 */
export function sendRedirect(
  req: IncomingMessage,
  res: ServerResponse,
  deploymentId: string,
  answer: Extract<RuleAnswer, { kind: 'redirect' }>,
  headerRules: readonly HeaderMatch[] | null,
): number {
  const body = Buffer.from(`Redirecting to ${answer.location}\n`);
  const fields = [
    DEPLOYMENT_HEADER,
    deploymentId,
    'Location',
    answer.location,
    'Content-Type',
    'text/plain; charset=utf-8',
    'Cache-Control',
    REVALIDATE,
    'Content-Length',
    String(body.length),
  ];
  res.writeHead(answer.status, headerRules ? withHeaderRules(fields, headerRules) : fields);
  if (req.method === 'HEAD') {
    res.end();
    return 0;
  }
  res.end(body);
  return body.length;
}

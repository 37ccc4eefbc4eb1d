import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEPLOYMENT_HEADER } from '../../../core/edge-headers.ts';
import { sendPage, type EdgePage } from './pages.ts';

/** Answers with one of the edge's pages, naming the deployment as every answer about it does. */
export function page(
  req: IncomingMessage,
  res: ServerResponse,
  deploymentId: string,
  edgePage: EdgePage,
): number {
  res.setHeader(DEPLOYMENT_HEADER, deploymentId);
  return sendPage(req, res, edgePage);
}

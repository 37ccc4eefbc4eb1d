import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendPage, type EdgePage } from '../pages.ts';
import type { ByteCounter } from '../static.ts';

/** Answers with one of the edge's own pages (see pages.ts), counting its bytes. */
export function page(
  req: IncomingMessage,
  res: ServerResponse,
  counter: ByteCounter,
  edgePage: EdgePage,
): void {
  counter.bytes += sendPage(req, res, edgePage);
}

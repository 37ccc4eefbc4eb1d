import type { FastifyRequest } from 'fastify';

/** What a project tab's page says after a form's change went through (`?done=`). */
const DONE: Record<string, string> = {
  added: 'Added.',
  verified: 'Verified.',
  removed: 'Removed.',
  saved: 'Saved. It applies to the next deployment.',
  redelivered: 'Sent again.',
  revoked: 'Revoked: its URL no longer deploys.',
  created: 'Project created.',
};

/** The message of the page's `?done=`, when it is one of ours (never the query's own words). */
export const doneMessage = (req: FastifyRequest): string | undefined => {
  const done = (req.query as { done?: string }).done;
  return done && Object.hasOwn(DONE, done) ? DONE[done] : undefined;
};

/** The route's path parameters. */
export const params = (req: FastifyRequest) => req.params as Record<string, string>;

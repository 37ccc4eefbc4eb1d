import { createHash } from 'node:crypto';
import type { RunIds } from './context.ts';
import type { Command } from './inputs.ts';

/** The server accepts 1 to 255 printable ASCII characters. */
const MAX_KEY = 255;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A short fingerprint of a request body, so that two different requests never share a key. */
export const bodyFingerprint = (body: unknown) => sha256(JSON.stringify(body ?? null)).slice(0, 16);

/**
 * The Idempotency-Key of one of the step's POSTs: the run, its attempt and the job name one try
 * of one job; the operation, the project as given and what distinguishes the request (a body
 * fingerprint, an explicit deployment id) name the call within it. A step retried within the
 * same attempt sends the same key, so the service answers the first result again instead of
 * deploying twice; a re-run of the workflow is a new attempt and deploys anew, as asked.
 * Outside a workflow run there is nothing to tie a retry to: undefined lets the client pick a
 * fresh key per call.
 */
export function idempotencyKey(
  run: RunIds | null,
  operation: Command | 'auto-rollback',
  project: string,
  distinguisher?: string,
): string | undefined {
  if (!run) return undefined;
  const parts = ['slipway-action', run.runId, run.attempt, run.job, operation, project];
  if (distinguisher) parts.push(distinguisher);
  const key = parts.join(':').replace(/[^\x21-\x7e]/g, '_');
  return key.length <= MAX_KEY ? key : `slipway-action:${sha256(key)}`;
}

import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../../../api/errors.ts';
import { UPLOAD_GRANT_HEADER } from '../../../api/schemas/uploads.ts';
import type { Deps } from '../deps/deps.ts';

/**
 * An upload grant: what `POST /files/missing` hands out so that the uploads it asked for do not
 * draw on the caller's hourly rate limit (docs/api/uploads.md#uploads-and-the-rate-limit). A
 * deploy then costs its few calls (ask, create, follow) however many files it sends.
 *
 * The grant is sealed with the service's encryption key (AES-GCM: it cannot be read, made or
 * changed without the key, and every API process shares the key), so the service keeps no row
 * per grant. What bounds it is counted like a user's window, in the same counts
 * (server/platform/deps/rate-counts/rate-counts.ts) under the grant's own key: at most `files` uploads, the number of
 * files that were missing, within an hour. Past either, an upload counts as any request.
 */
const Grant = z.object({
  kind: z.literal('upload-grant'),
  /** Random: the key its uses are counted under. */
  id: z.string(),
  userId: z.string(),
  projectId: z.string(),
  files: z.number().int().positive(),
  /** Unix epoch seconds. */
  expires: z.number().int(),
});

/** How long a grant covers uploads. */
export const UPLOAD_GRANT_SECONDS = 3600;

export function issueUploadGrant(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  userId: string,
  projectId: string,
  files: number,
) {
  const grant: z.infer<typeof Grant> = {
    kind: 'upload-grant',
    id: randomBytes(12).toString('base64url'),
    userId,
    projectId,
    files,
    expires: Math.floor(deps.clock.now().getTime() / 1000) + UPLOAD_GRANT_SECONDS,
  };
  return deps.cipher.encrypt(JSON.stringify(grant));
}

/** Where a grant's uses are counted: a key no user id can be, and the window its expiry falls in. */
export interface GrantBucket {
  key: string;
  windowStart: number;
  files: number;
}

/**
 * The bucket of a grant sent with an upload by `userId` to `projectId`; null when it has expired
 * (the upload then counts as any request). A grant this service did not issue, or issued to
 * another user or for another project, is a VALIDATION_ERROR naming the header.
 */
export function readUploadGrant(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  text: string,
  userId: string,
  projectId: string,
): GrantBucket | null {
  let parsed: z.infer<typeof Grant> | null = null;
  try {
    parsed = Grant.parse(JSON.parse(deps.cipher.decrypt(text)));
  } catch {
    // reported below
  }
  if (!parsed || parsed.userId !== userId || parsed.projectId !== projectId) {
    throw ApiError.validation([
      {
        path: `header.${UPLOAD_GRANT_HEADER}`,
        message:
          'is not an upload grant this service gave you for this project: send the uploadGrant of your own POST /v1/projects/<projectId>/files/missing, or leave the header out',
      },
    ]);
  }
  const now = Math.floor(deps.clock.now().getTime() / 1000);
  if (parsed.expires <= now) return null;
  // The window the expiry falls in: ended windows are pruned, and this one has not ended yet.
  return {
    key: `upload-grant:${parsed.id}`,
    windowStart: parsed.expires - (parsed.expires % 3600),
    files: parsed.files,
  };
}

import { uploads } from '../routes/uploads.ts';
import { UPLOAD_GRANT_HEADER } from '../schemas/uploads.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';

/** Files for deployments of uploaded files, by SHA-256 (see docs/api/uploads.md). */
export function uploadsApi(c: Caller) {
  return {
    /**
     * Which of these hashes the project's organization has not uploaded yet, with an
     * `uploadGrant` for uploading them off the hourly rate limit.
     */
    missing: (projectId: string, sha256: string[], o?: CallOptions) =>
      c.call(uploads.missing, { projectId }, { ...o, body: { sha256 } }),
    /**
     * Uploads one file's bytes; `sha256` must be their hash. With `uploadGrant` (from `missing`),
     * the upload does not count against the hourly rate limit.
     */
    upload: (
      projectId: string,
      sha256: string,
      bytes: Uint8Array,
      o?: CallOptions & { uploadGrant?: string | undefined },
    ) => {
      const { uploadGrant, ...call } = o ?? {};
      const headers = uploadGrant ? { ...call.headers, [UPLOAD_GRANT_HEADER]: uploadGrant } : call.headers;
      return c.call(
        uploads.upload,
        { projectId, sha256 },
        {
          ...call,
          ...(headers ? { headers } : {}),
          bytes,
        },
      );
    },
  };
}

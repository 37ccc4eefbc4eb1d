import { readFile } from 'node:fs/promises';
import { MAX_HASHES_PER_QUESTION } from '../schemas/uploads.ts';
import type { DeploymentFile } from '../schemas/uploads.ts';
import type { LocalFile } from './collect-files.ts';

/** The two calls this needs, as the typed client has them (`client.uploads`). */
export interface UploadsApi {
  missing(
    projectId: string,
    sha256: string[],
  ): Promise<{ missing: string[]; uploadGrant?: string | undefined }>;
  upload(
    projectId: string,
    sha256: string,
    bytes: Uint8Array,
    o?: { uploadGrant?: string | undefined },
  ): Promise<unknown>;
}

export interface UploadProgress {
  /** Files and bytes the deployment lists. */
  total: { files: number; bytes: number };
  /** Of those, what the service did not have, to send. */
  toSend: { files: number; bytes: number };
  /** Sent so far. */
  sent: { files: number; bytes: number };
}

export interface UploadOptions {
  /** Files sent at once; default 8. */
  concurrency?: number;
  /** Called once the missing files are known, then after each file sent. */
  onProgress?: (p: UploadProgress) => void;
}

const sum = (files: readonly LocalFile[]) => ({
  files: files.length,
  bytes: files.reduce((n, f) => n + f.size, 0),
});

/**
 * Sends the files the project's organization does not have yet (each content once) and returns
 * the list a deployment of them takes. Only changed files travel on a redeploy.
 */
export async function uploadFiles(
  api: UploadsApi,
  projectId: string,
  files: readonly LocalFile[],
  opts: UploadOptions = {},
): Promise<{ files: DeploymentFile[]; progress: UploadProgress }> {
  const unique = [...new Map(files.map((f) => [f.sha256, f])).values()];
  // Each missing file with the grant that keeps its upload off the rate limit (one per question).
  const missing = new Map<string, string | undefined>();
  for (let i = 0; i < unique.length; i += MAX_HASHES_PER_QUESTION) {
    const part = unique.slice(i, i + MAX_HASHES_PER_QUESTION).map((f) => f.sha256);
    const answer = await api.missing(projectId, part);
    for (const h of answer.missing) missing.set(h, answer.uploadGrant);
  }
  const queue = unique.filter((f) => missing.has(f.sha256));
  const progress: UploadProgress = { total: sum(files), toSend: sum(queue), sent: { files: 0, bytes: 0 } };
  opts.onProgress?.(progress);
  let next = 0;
  const lane = async () => {
    while (next < queue.length) {
      const f = queue[next++]!;
      await api.upload(projectId, f.sha256, await readFile(f.absolute), {
        uploadGrant: missing.get(f.sha256),
      });
      progress.sent.files++;
      progress.sent.bytes += f.size;
      opts.onProgress?.(progress);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 8, queue.length) }, lane));
  return {
    files: files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size, mode: f.mode })),
    progress,
  };
}

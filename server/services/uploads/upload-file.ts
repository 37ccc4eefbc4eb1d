import type { Readable } from 'node:stream';
import { ApiError } from '../../../api/errors.ts';
import type { MissingFiles, UploadedFile } from '../../../api/schemas/uploads.ts';
import { createUploadStore, UploadRefused } from '../../uploads/upload-store.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';

/**
 * Notes that the organization has `sha256` (its size known), so "missing" stops listing it and
 * its deployments may use it. Touching it again keeps it from the clean-up.
 */
async function recordUpload(deps: Deps, organizationId: string, sha256: string, size: number): Promise<void> {
  const now = deps.clock.now().toISOString();
  await deps.db
    .insertInto('uploaded_files')
    .values({ organization_id: organizationId, sha256, size, last_used_at: now })
    .onConflict((oc) => oc.columns(['organization_id', 'sha256']).doUpdateSet({ last_used_at: now }))
    .execute();
}

/**
 * Stores one file the caller sends for a project's deployments (developer and up), by its
 * SHA-256; the bytes must hash to it. A file the organization already has is not read again.
 */
export async function uploadFile(
  deps: Deps,
  actor: Actor,
  projectId: string,
  sha256: string,
  body: Readable,
): Promise<{ file: UploadedFile; created: boolean }> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const store = createUploadStore(deps.config.uploads.dir);
  const known = await deps.db
    .selectFrom('uploaded_files')
    .select('size')
    .where('organization_id', '=', project.organization_id)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
  const onDisk = known ? await store.size(sha256) : null;
  if (known && onDisk !== null) {
    body.resume();
    await recordUpload(deps, project.organization_id, sha256, onDisk);
    return { file: { sha256, size: onDisk }, created: false };
  }
  let size: number;
  try {
    size = await store.put(sha256, body, deps.config.uploads.maxBytes);
  } catch (err) {
    if (err instanceof UploadRefused) {
      body.resume();
      throw ApiError.validation([{ path: err.reason === 'hash' ? 'sha256' : 'body', message: err.message }]);
    }
    throw err;
  }
  await recordUpload(deps, project.organization_id, sha256, size);
  return { file: { sha256, size }, created: true };
}

/**
 * Which of `hashes` the project's organization has not uploaded. Those it has are touched, so the
 * clean-up keeps them for the deployment about to list them.
 */
export async function missingFiles(
  deps: Deps,
  actor: Actor,
  projectId: string,
  hashes: readonly string[],
): Promise<MissingFiles> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const unique = [...new Set(hashes)];
  const have = new Set<string>();
  // In parts: a database takes only so many parameters in one statement.
  for (let i = 0; i < unique.length; i += 1000) {
    const rows = await deps.db
      .updateTable('uploaded_files')
      .set({ last_used_at: deps.clock.now().toISOString() })
      .where('organization_id', '=', project.organization_id)
      .where('sha256', 'in', unique.slice(i, i + 1000))
      .returning('sha256')
      .execute();
    for (const r of rows) have.add(r.sha256);
  }
  return { missing: unique.filter((h) => !have.has(h)) };
}

import type { Readable } from 'node:stream';
import { ApiError } from '../../../api/errors.ts';
import type { MissingFiles, UploadedFile } from '../../../api/schemas/uploads.ts';
import { uploadStoreOf, UploadRefused } from './upload-store.ts';
import { requireProject } from '../identity/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { chargeUpload, checkRoom, type UploadPayer } from './upload-quota.ts';
import { issueUploadGrant } from '../../platform/http/upload-grant.ts';

/** Touches an upload the organization keeps already, so the clean-up keeps it. */
async function touchUpload(deps: Deps, organizationId: string, sha256: string): Promise<void> {
  await deps.db
    .updateTable('uploaded_files')
    .set({ last_used_at: deps.clock.now().toISOString() })
    .where('organization_id', '=', organizationId)
    .where('sha256', '=', sha256)
    .execute();
}

/**
 * Stores one file the caller sends for a project's deployments (developer and up), by its
 * SHA-256; the bytes must hash to it, also when the organization has that file already (they are
 * then checked and not stored again).
 * A new file is charged to the organization's storage quota (its plan's `storage`): one that
 * does not fit is refused with QUOTA_EXCEEDED and nothing of it is kept. `declaredBytes` (the
 * request's Content-Length) lets a file that cannot fit be refused before its bytes are read.
 */
export async function uploadFile(
  deps: Deps,
  actor: Actor,
  projectId: string,
  sha256: string,
  body: Readable,
  declaredBytes: number | null = null,
): Promise<{ file: UploadedFile; created: boolean }> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const store = uploadStoreOf(deps.config);
  const org = await deps.db
    .selectFrom('organizations')
    .select(['id', 'name', 'plan'])
    .where('id', '=', project.organization_id)
    .executeTakeFirstOrThrow();
  const payer: UploadPayer = { id: org.id, name: org.name, plan: org.plan };
  const known = await deps.db
    .selectFrom('uploaded_files')
    .select('size')
    .where('organization_id', '=', payer.id)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
  const refuse = (err: unknown): never => {
    body.resume();
    if (err instanceof UploadRefused) {
      throw ApiError.validation([{ path: err.reason === 'hash' ? 'sha256' : 'body', message: err.message }]);
    }
    throw err;
  };
  const onDisk = known ? await store.size(sha256) : null;
  if (known && onDisk !== null) {
    // Kept already: the bytes are not stored again, but they must still be the file named, so
    // a wrong upload is refused the same whether or not the organization has that hash.
    await store.verify(sha256, body, deps.config.uploads.maxBytes).catch(refuse);
    await touchUpload(deps, payer.id, sha256);
    return { file: { sha256, size: onDisk }, created: false };
  }
  // Kept, but its bytes went missing: it is charged already, only the bytes come back.
  if (known) {
    const size = await store.put(sha256, body, deps.config.uploads.maxBytes).catch(refuse);
    await touchUpload(deps, payer.id, sha256);
    return { file: { sha256, size }, created: true };
  }
  await checkRoom(deps, payer, declaredBytes).catch(refuse);
  const received = await store.receive(sha256, body, deps.config.uploads.maxBytes).catch(refuse);
  let charged: boolean;
  try {
    charged = await chargeUpload(deps, payer, sha256, received.size);
  } catch (err) {
    await received.drop();
    throw err;
  }
  // Recorded first, then in place: a refused upload is never seen in the store.
  await received.keep();
  return { file: { sha256, size: received.size }, created: charged };
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
  const missing = unique.filter((h) => !have.has(h));
  if (missing.length === 0) return { missing };
  return { missing, uploadGrant: issueUploadGrant(deps, actor.userId, project.id, missing.length) };
}

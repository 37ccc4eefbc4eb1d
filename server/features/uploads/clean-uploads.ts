import type { Deps } from '../../platform/deps/deps.ts';
import { uploadStoreOf } from './upload-store.ts';
import { decodeBuildSpec } from '../../platform/store/build-spec.ts';
import { releaseUpload } from './upload-quota.ts';

/** Rows looked at per run: the monitoring run comes again a minute later. */
const BATCH = 1000;

/**
 * Forgets uploads no organization has used for `SLIPWAY_UPLOAD_TTL` (24 h by default), except
 * files a queued or building deployment still lists, gives their bytes back to the organization's
 * storage quota, and removes the bytes once no organization has them. Deployments already built do not need them: their artifacts hold their own copies.
 */
export async function cleanUploads(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.uploads.ttlMs).toISOString();
  const stale = await deps.db
    .selectFrom('uploaded_files')
    .select(['organization_id', 'sha256'])
    .where('last_used_at', '<=', cutoff)
    .limit(BATCH)
    .execute();
  if (stale.length === 0) return 0;
  const pending = await deps.db
    .selectFrom('deployments')
    .select(['id', 'build_spec'])
    .where('source', 'in', ['upload', 'prebuilt'])
    .where('source_deployment_id', 'is', null)
    .where('status', 'in', ['queued', 'building'])
    .execute();
  const needed = new Set(
    pending.flatMap((d) => {
      const { source } = decodeBuildSpec(d.id, d.build_spec);
      return source.kind === 'git' ? [] : source.files.map((f) => f.sha256);
    }),
  );
  const store = uploadStoreOf(deps.config);
  let removed = 0;
  for (const row of stale) {
    if (needed.has(row.sha256)) continue;
    // The row and the bytes charged for it go together (upload-quota.ts).
    if (!(await releaseUpload(deps, row.organization_id, row.sha256, cutoff))) continue;
    removed++;
    const others = await deps.db
      .selectFrom('uploaded_files')
      .select('sha256')
      .where('sha256', '=', row.sha256)
      .executeTakeFirst();
    if (!others) await store.remove(row.sha256);
  }
  return removed;
}

import { sql } from 'kysely';
import { ApiError } from '../../../api/errors.ts';
import { describeBytes } from '../../core/format.ts';
import type { PlanName } from '../../core/plan-limits.ts';
import type { Deps } from '../../platform/deps/deps.ts';

/** The organization an upload is charged to. */
export interface UploadPayer {
  id: string;
  name: string;
  plan: PlanName;
}

/** Thrown inside the charging transaction so that its insert is undone. */
class OverQuota extends Error {}

/**
 * What an organization keeps: the bytes of every file it uploaded that is still kept, each
 * distinct file once, whether or not another organization has the same bytes (the count must not
 * depend on, or tell anything about, other tenants' files).
 */
export async function uploadUsage(deps: Pick<Deps, 'db'>, organizationId: string): Promise<number> {
  const row = await deps.db
    .selectFrom('organizations')
    .select('upload_bytes')
    .where('id', '=', organizationId)
    .executeTakeFirst();
  return Number(row?.upload_bytes ?? 0);
}

/**
 * Refuses early, before the bytes are read, when the organization is already at its quota or
 * the file's declared length would not fit. The exact check is chargeUpload's.
 */
export async function checkRoom(
  deps: Pick<Deps, 'db' | 'config' | 'clock'>,
  payer: UploadPayer,
  declaredBytes: number | null,
): Promise<void> {
  const limit = deps.config.plans[payer.plan].storageBytes;
  const used = await uploadUsage(deps, payer.id);
  const size = declaredBytes ?? 0;
  if (used + size > limit) {
    throw await storageQuotaError(deps, payer, used, size);
  }
}

/**
 * Records that the organization keeps `sha256` and charges its size to the organization's
 * storage, in one transaction: the count goes up only when it stays within the plan's quota (a
 * conditional update, so two uploads at once cannot both pass it on SQLite or PostgreSQL). A
 * file the organization already keeps is touched and not charged again. Returns whether it was
 * charged (a new file); throws QUOTA_EXCEEDED, with nothing recorded, when it does not fit.
 */
export async function chargeUpload(
  deps: Pick<Deps, 'db' | 'config' | 'clock'>,
  payer: UploadPayer,
  sha256: string,
  size: number,
): Promise<boolean> {
  const limit = deps.config.plans[payer.plan].storageBytes;
  const now = deps.clock.now().toISOString();
  try {
    return await deps.db.transaction().execute(async (tx) => {
      const inserted = await tx
        .insertInto('uploaded_files')
        .values({ organization_id: payer.id, sha256, size, last_used_at: now })
        .onConflict((oc) => oc.columns(['organization_id', 'sha256']).doNothing())
        .returning('sha256')
        .executeTakeFirst();
      if (!inserted) {
        await tx
          .updateTable('uploaded_files')
          .set({ last_used_at: now })
          .where('organization_id', '=', payer.id)
          .where('sha256', '=', sha256)
          .execute();
        return false;
      }
      const charged = await tx
        .updateTable('organizations')
        .set({ upload_bytes: sql`upload_bytes + ${size}` })
        .where('id', '=', payer.id)
        .where(sql<boolean>`upload_bytes + ${size} <= ${limit}`)
        .executeTakeFirst();
      if (Number(charged.numUpdatedRows) === 0) throw new OverQuota();
      return true;
    });
  } catch (err) {
    if (!(err instanceof OverQuota)) throw err;
    throw await storageQuotaError(deps, payer, await uploadUsage(deps, payer.id), size);
  }
}

/** Forgets one upload of an organization and gives its bytes back to the quota; false when it was gone. */
export async function releaseUpload(
  deps: Pick<Deps, 'db'>,
  organizationId: string,
  sha256: string,
  staleBefore: string,
): Promise<boolean> {
  return deps.db.transaction().execute(async (tx) => {
    const gone = await tx
      .deleteFrom('uploaded_files')
      .where('organization_id', '=', organizationId)
      .where('sha256', '=', sha256)
      .where('last_used_at', '<=', staleBefore)
      .returning('size')
      .executeTakeFirst();
    if (!gone) return false;
    await tx
      .updateTable('organizations')
      .set({ upload_bytes: sql`upload_bytes - ${Number(gone.size)}` })
      .where('id', '=', organizationId)
      .execute();
    return true;
  });
}

const describeTtl = (ms: number) =>
  ms % 3_600_000 === 0
    ? `${ms / 3_600_000} hour${ms === 3_600_000 ? '' : 's'}`
    : `${Math.round(ms / 60_000)} minutes`;

/**
 * The 413 QUOTA_EXCEEDED of an upload that does not fit: it names the quota, what the
 * organization keeps, its plan, and the ways out (uploads expire, a plan with more storage).
 */
async function storageQuotaError(
  deps: Pick<Deps, 'db' | 'config' | 'clock'>,
  payer: UploadPayer,
  used: number,
  size: number,
): Promise<ApiError> {
  const { plans, uploads } = deps.config;
  const limit = plans[payer.plan].storageBytes;
  const oldest = await deps.db
    .selectFrom('uploaded_files')
    .select((eb) => eb.fn.min('last_used_at').as('at'))
    .where('organization_id', '=', payer.id)
    .executeTakeFirst();
  const dueAt = oldest?.at ? new Date(Date.parse(oldest.at) + uploads.ttlMs).toISOString() : null;
  const bigger = (Object.keys(plans) as PlanName[])
    .filter((p) => plans[p].storageBytes > limit)
    .sort((a, b) => plans[a].storageBytes - plans[b].storageBytes)[0];
  const file = size > 0 ? `this file of ${describeBytes(size)} does not fit` : 'nothing more fits';
  return new ApiError(
    'QUOTA_EXCEEDED',
    `Storage quota exceeded: organization ${payer.name} keeps ${describeBytes(used)} (${used} bytes) of ` +
      `uploaded files and the ${payer.plan} plan's storage quota is ${describeBytes(limit)}; ${file}. ` +
      `Uploads not used for ${describeTtl(uploads.ttlMs)} are removed (SLIPWAY_UPLOAD_TTL)` +
      (dueAt ? `, the oldest of this organization's at ${dueAt}` : '') +
      `; or move the organization to a plan with more storage` +
      (bigger ? ` (${bigger}: ${describeBytes(plans[bigger].storageBytes)})` : '') +
      '.',
    { quota: 'storage', plan: payer.plan, usedBytes: used, limitBytes: limit, fileBytes: size },
  );
}

import type { Kysely, Selectable } from 'kysely';
import type { Alert, AlertType } from '../../../api/schemas/monitoring.ts';
import { newId } from '../../core/ids.ts';
import type { AlertsTable, Database } from '../../platform/store/schema.ts';
import type { Deps } from '../../platform/deps/deps.ts';

export function toAlert(row: Selectable<AlertsTable>): Alert {
  return {
    id: row.id,
    projectId: row.project_id,
    type: row.type,
    status: row.status,
    message: row.message,
    createdAt: row.created_at,
    resolvedAt: row.resolved_at,
  };
}

/** `db` may be a transaction: pass `{ ...deps, db: tx }` to open or resolve with a change. */
type AlertDeps = Pick<Deps, 'clock'> & { db: Kysely<Database> };

/**
 * Opens an alert of `type` unless one is already active for the project (a partial unique index
 * allows one). Returns the active alert and whether this call opened it.
 */
export async function openAlert(
  deps: AlertDeps,
  projectId: string,
  type: AlertType,
  message: string,
): Promise<{ alert: Alert; opened: boolean }> {
  // ON CONFLICT DO NOTHING rather than catching the unique violation: on PostgreSQL an error
  // would abort a surrounding transaction, and this runs inside callers' transactions.
  const res = await deps.db
    .insertInto('alerts')
    .values({
      id: newId('alt'),
      project_id: projectId,
      type,
      status: 'active',
      message,
      created_at: deps.clock.now().toISOString(),
      resolved_at: null,
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  const row = await deps.db
    .selectFrom('alerts')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('type', '=', type)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return { alert: toAlert(row), opened: Number(res.numInsertedOrUpdatedRows ?? 0) > 0 };
}

/** Resolves the project's active alert of `type`; returns it, or null when none was active. */
export async function resolveAlert(
  deps: AlertDeps,
  projectId: string,
  type: AlertType,
): Promise<Alert | null> {
  const active = await deps.db
    .selectFrom('alerts')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('type', '=', type)
    .where('status', '=', 'active')
    .executeTakeFirst();
  if (!active) return null;
  const resolvedAt = deps.clock.now().toISOString();
  const res = await deps.db
    .updateTable('alerts')
    .set({ status: 'resolved', resolved_at: resolvedAt })
    .where('id', '=', active.id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  // Another resolver got there first: the alert is resolved either way, but not by this call.
  if (Number(res.numUpdatedRows) === 0) return null;
  return toAlert({ ...active, status: 'resolved', resolved_at: resolvedAt });
}

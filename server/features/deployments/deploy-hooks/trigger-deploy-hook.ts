import { type Kysely, sql } from 'kysely';
import { ApiError } from '../../../../api/errors.ts';
import type { DeployHookTriggered } from '../../../../api/schemas/deploy-hooks.ts';
import { decideBuildSpec, encodeBuildSpec } from '../../../platform/store/build-spec.ts';
import { assertDeployable } from '../find-deployment.ts';
import { afterQueued, queueDeployment } from '../queue-deployment.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import type { ProjectRow } from '../../../platform/deps/project-with-role.ts';
import type { Database } from '../../../platform/store/schema.ts';
import { hashHookSecret, parseHookKey, secretMatches } from './hook-secret.ts';

const WINDOW_SECONDS = 3600;

/** One answer for every hook that cannot be used: unknown, revoked, wrong secret, project gone. */
const noSuchHook = () =>
  ApiError.notFound(
    'No deploy hook at this URL: it may have been revoked; ask an admin of the project for a new one',
  );

/** Compared against when there is no hook, so that the answer takes as long either way. */
const NO_HASH = hashHookSecret('');

/** The hook's hourly window, for the `X-RateLimit-*` headers. */
export interface HookWindow {
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the window resets. */
  reset: number;
}

/** A deployment queued or joined, or a request refused because the hour's requests are spent. */
export type TriggerResult =
  | { answer: DeployHookTriggered; window: HookWindow }
  | { refused: { limit: number; retryAfter: number }; window: HookWindow };

/**
 * POST to a deploy hook's URL (no token: the URL is the credential). Queues a git build of the
 * hook's branch head: production when it is the project's branch, else preview, as
 * `POST /projects/<id>/deployments` decides. Each hook takes `deployHookRateLimit` requests per
 * fixed hour, counted on its row; a refused request does not count. While the hook's previous
 * deployment has not started building, a request gets that one back (`created: false`): it will
 * check out the branch's head when it starts, so a second build would build the same commit.
 */
export async function triggerDeployHook(deps: Deps, key: string): Promise<TriggerResult> {
  const hook = await findHook(deps, key);
  const limit = deps.config.deployHookRateLimit;
  const now = deps.clock.now();
  const nowSec = Math.floor(now.getTime() / 1000);
  const windowStart = nowSec - (nowSec % WINDOW_SECONDS);
  const reset = windowStart + WINDOW_SECONDS;

  const result = await deps.db.transaction().execute(async (tx) => {
    const counted = await countRequest(tx, hook.id, { windowStart, limit, now });
    if (!counted) return { refused: true as const };
    const remaining = Math.max(0, limit - Number(counted.window_count));
    const previous = counted.last_deployment_id
      ? await stillQueued(tx, counted.last_deployment_id)
      : undefined;
    if (previous) {
      return {
        remaining,
        deliveries: 0,
        answer: { id: previous.id, url: deps.urls.forHost(previous.host), created: false },
      };
    }
    return { remaining, ...(await queueFromHook(tx, deps, hook)) };
  });

  if ('refused' in result) {
    return {
      refused: { limit, retryAfter: Math.max(1, reset - nowSec) },
      window: { limit, remaining: 0, reset },
    };
  }
  if (result.answer.created) afterQueued(deps, result.deliveries);
  return { answer: result.answer, window: { limit, remaining: result.remaining, reset } };
}

/** A usable hook: its row's id, name, branch and maker, and its project (deployable). */
interface FoundHook {
  id: string;
  name: string;
  branch: string;
  createdBy: HookRow['hook_created_by'];
  project: ProjectRow;
}

type HookRow = NonNullable<Awaited<ReturnType<typeof selectHook>>>;

function selectHook(deps: Deps, hookId: string) {
  return deps.db
    .selectFrom('deploy_hooks as h')
    .innerJoin('projects as p', 'p.id', 'h.project_id')
    .selectAll('p')
    .select([
      'h.name as hook_name',
      'h.branch as hook_branch',
      'h.secret_hash',
      'h.created_by as hook_created_by',
    ])
    .where('h.id', '=', hookId)
    .where('p.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The hook of this key, with its secret checked (in as long either way); else NOT_FOUND. */
async function findHook(deps: Deps, key: string): Promise<FoundHook> {
  const parsed = parseHookKey(key);
  if (!parsed) throw noSuchHook();
  const found = await selectHook(deps, parsed.hookId);
  const matches = secretMatches(parsed.secret, found?.secret_hash ?? NO_HASH);
  if (!found || !matches) throw noSuchHook();
  const {
    hook_name: name,
    hook_branch: branch,
    secret_hash: _,
    hook_created_by: createdBy,
    ...project
  } = found;
  assertDeployable(project);
  return { id: parsed.hookId, name, branch, createdBy, project };
}

/**
 * Counts the request if the window has room; undefined when it has none (NOT_FOUND when the
 * hook is gone). On PostgreSQL the update also locks the hook's row until commit: two requests at
 * once take turns, so the second sees the first's deployment.
 */
async function countRequest(
  tx: Kysely<Database>,
  hookId: string,
  w: { windowStart: number; limit: number; now: Date },
): Promise<{ window_count: number; last_deployment_id: string | null } | undefined> {
  const counted = await tx
    .updateTable('deploy_hooks')
    .set({
      window_count: sql<number>`case when window_start = ${w.windowStart} then window_count + 1 else 1 end`,
      window_start: w.windowStart,
      last_used_at: w.now.toISOString(),
    })
    .where('id', '=', hookId)
    .where((eb) => eb.or([eb('window_start', '<>', w.windowStart), eb('window_count', '<', w.limit)]))
    .returning(['window_count', 'last_deployment_id'])
    .executeTakeFirst();
  if (counted) return counted;
  const still = await tx.selectFrom('deploy_hooks').select('id').where('id', '=', hookId).executeTakeFirst();
  if (!still) throw noSuchHook();
  return undefined;
}

/** The hook's previous deployment, while it has not started building. */
function stillQueued(tx: Kysely<Database>, deploymentId: string) {
  return tx
    .selectFrom('deployments')
    .select(['id', 'host'])
    .where('id', '=', deploymentId)
    .where('status', '=', 'queued')
    .executeTakeFirst();
}

/** Queues a git build of the hook's branch head, and remembers it on the hook. */
async function queueFromHook(tx: Kysely<Database>, deps: Deps, hook: FoundHook) {
  const { project, branch } = hook;
  const target = branch === project.branch ? 'production' : 'preview';
  const source = { kind: 'git' as const, ref: branch, commit: null };
  const spec = decideBuildSpec(project, { target, branch, source, cache: true });
  const { row, deliveries } = await queueDeployment(tx, deps, project, {
    project_id: project.id,
    target,
    branch,
    message: `Deploy hook "${hook.name}"`,
    // The member who made the hook answers for what it deploys.
    created_by: hook.createdBy,
    source: 'git',
    build_spec: encodeBuildSpec(spec),
  });
  await tx
    .updateTable('deploy_hooks')
    .set({ last_deployment_id: row.id })
    .where('id', '=', hook.id)
    .execute();
  return { deliveries, answer: { id: row.id, url: deps.urls.forHost(row.host), created: true } };
}

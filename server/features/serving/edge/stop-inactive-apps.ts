import type { Kysely } from 'kysely';
import type { Clock } from '../../../core/clock.ts';
import { every } from '../../../core/every.ts';
import type { Database } from '../../../platform/store/schema.ts';
import type { RuntimeLauncher } from './launcher.ts';

export interface InactiveAppStopper {
  /**
   * Looks up the projects that have apps running here and stops those of projects no longer
   * active. Calls while one runs are folded into one more check after it; never rejects.
   */
  check(): Promise<void>;
  /** Stops the timer and waits for a check under way. */
  stop(): Promise<void>;
}

export interface InactiveAppStopperOptions {
  /**
   * How often to check without being told (default 1 s, like the edge's host cache). The routing
   * signal is the fast path, but it cannot reach this process from everywhere: `slipway project
   * suspend` on SQLite runs in a process of its own, and a notification can be lost.
   */
  intervalMs?: number;
  /** After the apps of a suspended or deleted project were stopped. */
  onStopped?(projectId: string): void;
  onError?(err: unknown): void;
  /** Whose time the interval counts (default the process's timers): a fake clock in tests. */
  clock?: Clock;
}

/**
 * A suspended or deleted project's server apps stop at once, not when they next go idle (30
 * minutes): the edge no longer serves them, and they should not keep running the tenant's code.
 * Call `check()` whenever routing changes; the timer catches what no signal reported, and an app
 * that a request already on its way started again just after a check.
 */
export function startInactiveAppStopper(
  deps: { db: Kysely<Database> },
  launcher: Pick<RuntimeLauncher, 'projects' | 'stopProject'>,
  opts: InactiveAppStopperOptions = {},
): InactiveAppStopper {
  let chain: Promise<void> = Promise.resolve();
  let queued: Promise<void> | null = null;

  const once = async () => {
    const projectIds = launcher.projects();
    if (projectIds.length === 0) return;
    const active = await deps.db
      .selectFrom('projects')
      .select('id')
      .where('id', 'in', projectIds)
      .where('status', '=', 'active')
      .where('deleted_at', 'is', null)
      .execute();
    const keep = new Set(active.map((r) => r.id));
    await Promise.all(
      projectIds
        .filter((id) => !keep.has(id))
        .map(async (id) => {
          await launcher.stopProject(id);
          opts.onStopped?.(id);
        }),
    );
  };

  const check = (): Promise<void> => {
    if (queued) return queued;
    const next = chain
      .then(() => {
        queued = null;
        return once();
      })
      .catch((err: unknown) => opts.onError?.(err));
    queued = next;
    chain = next;
    return next;
  };

  // check() folds and catches by itself (calls from routing changes come between the ticks).
  const timer = every(opts.intervalMs ?? 1000, check, { clock: opts.clock, onError: () => undefined });

  return {
    check,
    async stop() {
      await timer.stop();
      await chain;
    },
  };
}

import type { ProjectWithRole } from '../project-with-role.ts';

/**
 * Where a process counts its requests against each user's hourly window (server/platform/http/rate-limit.ts),
 * and reads the project a request names with the caller's role on the way:
 *
 * - SQLite, served by one process: counted in memory, exactly, and written behind once a second
 *   (rate-counts-memory.ts); the project comes from the reads kept until they change.
 * - PostgreSQL, shared by several API processes: counted in the database before the answer
 *   (rate-counts-batched.ts); the requests that arrive while one count is on its way are counted
 *   together by the next statement, which reads their projects as well.
 */
export interface RateCounts {
  /**
   * Counts a request in the window if it has room. `count` is the count after it, or null when
   * the window is full (nothing was counted). With `projectId`, `project` is that project with
   * the caller's role, or null when there is none.
   */
  take(userId: string, windowStart: number, limit: number, projectId?: string): Promise<Counted>;
  /** The count of a window as it stands, counting nothing (what an uncounted request reports). */
  peek(userId: string, windowStart: number): Promise<number>;
  /** Settles what is on its way: counts written (SQLite), statements answered (PostgreSQL). */
  flush(): Promise<void>;
  /** Stops taking work on its own and settles what is left. */
  close(): Promise<void>;
}

export interface Counted {
  count: number | null;
  project?: ProjectWithRole | null;
}

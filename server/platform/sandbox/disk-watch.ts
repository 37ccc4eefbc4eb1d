import { execFile } from 'node:child_process';
import { every } from '../../core/every.ts';

export interface DiskWatch {
  stop(): void;
}

/** Bytes on disk under `dir` (allocated blocks, as `du` counts them; links are not followed). */
export function diskUsage(dir: string): Promise<number | null> {
  return new Promise((resolve) => {
    execFile('du', ['-s', '-B1', '-x', dir], { timeout: 30_000 }, (_err, stdout) => {
      const bytes = Number(/^(\d+)/.exec(stdout)?.[1]);
      resolve(Number.isFinite(bytes) ? bytes : null);
    });
  });
}

/**
 * Calls `onExceeded` once when the files under `dir` take more than `maxBytes`. Checked every
 * `intervalMs`: a build can overshoot by whatever all its processes write in that time and while
 * `du` walks the tree (prlimit's fsize bounds each file, not their sum; 16 writers reached 2.5
 * times a 64 MiB limit). The fallback where the kernel cannot hold the limit (workspace-disk.ts).
 */
export function watchDisk(
  dir: string,
  maxBytes: number,
  onExceeded: (bytes: number) => void,
  intervalMs = 1000,
): DiskWatch {
  return pollUntil(
    intervalMs,
    async () => {
      const bytes = await diskUsage(dir);
      return bytes !== null && bytes > maxBytes ? bytes : null;
    },
    onExceeded,
  );
}

/**
 * Runs `check` every `intervalMs` until it finds something, then stops and hands it to `onFound`
 * (once). A check slower than the interval is not doubled: every() skips the ticks while one
 * runs; a failed one is tried again at the next tick.
 */
export function pollUntil<T>(
  intervalMs: number,
  check: () => Promise<T | null>,
  onFound: (found: T) => void,
): DiskWatch {
  let stopped = false;
  const timer = every(
    intervalMs,
    async () => {
      const found = await check();
      if (stopped || found === null) return;
      stopped = true;
      void timer.stop();
      onFound(found);
    },
    { onError: () => undefined },
  );
  return {
    stop() {
      stopped = true;
      void timer.stop();
    },
  };
}

import type { LogType } from '../../api/schemas/deployments.ts';
import { appendLog } from '../services/deployments/deployment-logs.ts';
import type { Deps } from '../services/deps.ts';

export interface LogBuffer {
  push(type: LogType, line: string): void;
  /** Writes everything pushed so far; call before every state change so logs precede it. */
  flush(): Promise<void>;
}

/**
 * Build output arrives a line at a time; writing each line in its own statement would make a
 * chatty build slow. Lines are written in batches, at most `intervalMs` after they arrive.
 */
export function createLogBuffer(
  deps: Pick<Deps, 'db' | 'clock' | 'log'>,
  deploymentId: string,
  intervalMs = 100,
): LogBuffer {
  let pending: { type: LogType; line: string }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();

  const write = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return chain;
    chain = chain.then(async () => {
      for (const type of ['build', 'runtime', 'error'] as const) {
        const lines = batch.filter((b) => b.type === type).map((b) => b.line);
        if (lines.length) await appendLog(deps, deploymentId, type, lines);
      }
    });
    chain = chain.catch((err: unknown) =>
      deps.log.warn({ err, deploymentId }, 'could not write build log lines'),
    );
    return chain;
  };

  return {
    push(type, line) {
      pending.push({ type, line });
      if (pending.length >= 200) void write();
      else timer ??= setTimeout(() => void write(), intervalMs);
    },
    flush: write,
  };
}

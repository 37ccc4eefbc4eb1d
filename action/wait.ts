import type { SlipwayClient } from '../api/client/index.ts';
import type { Deployment } from '../api/schemas/deployments.ts';
import { formatDuration } from './duration.ts';
import type { Runner } from './runner.ts';

/** Log lines kept for the failure message. */
export const TAIL_LINES = 20;
/** Polling (only when the log stream fails) starts here and grows by half each time, up to the cap. */
export const POLL_FIRST_MS = 5_000;
export const POLL_MAX_MS = 30_000;

const FINAL = new Set(['live', 'failed']);

export interface WaitDeps {
  client: Pick<SlipwayClient, 'deployments'>;
  runner: Runner;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface WaitOptions {
  timeoutMs: number;
  /** Print the log lines into a collapsible group (else they are only kept for errors). */
  streamLogs: boolean;
  /** Title of the log group. */
  title: string;
}

/** How waiting ended: the deployment in its final state, or the last state seen at the time limit. */
export interface WaitResult {
  deployment: Deployment;
  timedOut: boolean;
  /** The last lines of the build log. */
  logTail: string[];
  waitedMs: number;
}

class TimeLimit extends Error {
  constructor(ms: number) {
    super(`no result within ${formatDuration(ms)}`);
    this.name = 'TimeLimit';
  }
}

/**
 * Waits for a deployment to be live or failed within `timeoutMs`. The build log is followed
 * through one server-sent-events request (its lines go into a collapsible group), then one GET
 * reads the final deployment: a whole build costs two requests of the hourly quota. Only when the
 * stream breaks does it poll, every 5 seconds or more.
 */
export async function waitForDeployment(
  deps: WaitDeps,
  deployment: Deployment,
  opts: WaitOptions,
): Promise<WaitResult> {
  const started = deps.now();
  const tail: string[] = [];
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
  };
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(new TimeLimit(opts.timeoutMs)), opts.timeoutMs);
  let last = deployment;
  try {
    if (!FINAL.has(deployment.status)) {
      last = (await follow(deps, deployment.id, opts, keep, limit.signal))
        ? await deps.client.deployments.get(deployment.id, { signal: limit.signal })
        : await poll(deps, deployment.id, limit.signal, (d) => (last = d));
    }
    if (last.status === 'failed' && tail.length === 0) {
      // Polled, so no line was seen: the failure message still shows the end of the log.
      const logs = await deps.client.deployments.logs(
        deployment.id,
        { tail: TAIL_LINES },
        { signal: limit.signal },
      );
      for (const line of logs.logs.split('\n')) if (line) keep(line);
    }
    return { deployment: last, timedOut: false, logTail: tail, waitedMs: deps.now() - started };
  } catch (err) {
    if (!limit.signal.aborted) throw err;
    // Timed out: one last look, so the outputs say where the deployment got to.
    last = await deps.client.deployments.get(deployment.id).catch(() => last);
    return { deployment: last, timedOut: true, logTail: tail, waitedMs: deps.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** Follows the log stream to its end; false when the stream failed or ended without a final state. */
async function follow(
  deps: WaitDeps,
  id: string,
  opts: WaitOptions,
  keep: (line: string) => void,
  signal: AbortSignal,
): Promise<boolean> {
  if (opts.streamLogs) deps.runner.startGroup(opts.title);
  try {
    // The whole log so far, then every new line: a build seldom writes more than this.
    const lines = deps.client.deployments.followLogs(id, { tail: 10_000, signal });
    for (let step = await lines.next(); ; step = await lines.next()) {
      if (step.done) return step.value !== null;
      keep(step.value);
      if (opts.streamLogs) deps.runner.info(step.value);
    }
  } catch (err) {
    if (signal.aborted) throw err;
    deps.runner.warning(
      `Following the build log of ${id} failed (${(err as Error).message}); checking its state every ${POLL_FIRST_MS / 1000} seconds or more instead.`,
    );
    return false;
  } finally {
    if (opts.streamLogs) deps.runner.endGroup();
  }
}

/** Reads the deployment until it is final, backing off from 5 to 30 seconds between reads. */
async function poll(
  deps: WaitDeps,
  id: string,
  signal: AbortSignal,
  seen: (d: Deployment) => void,
): Promise<Deployment> {
  for (let delay = POLL_FIRST_MS; ; delay = Math.min(Math.round(delay * 1.5), POLL_MAX_MS)) {
    const d = await deps.client.deployments.get(id, { signal });
    seen(d);
    if (FINAL.has(d.status)) return d;
    await deps.sleep(delay, signal);
  }
}

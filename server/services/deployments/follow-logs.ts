import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ApiError } from '../../../api/errors.ts';
import type { LogStreamEnd, LogType } from '../../../api/schemas/deployments.ts';
import type { Actor, Deps } from '../deps.ts';
import { onDeploymentActivity } from './deployment-activity.ts';
import { linesAfter, tailLines, type LogLine } from './deployment-logs.ts';
import { requireDeployment } from './find-deployment.ts';

/** How a log stream behaves; the defaults are what the API uses, tests shorten them. */
export interface StreamOptions {
  /** Which log to stream. */
  type: LogType;
  /** Lines of history sent first. */
  tail: number;
  /** Resume after this line id (the `id:` of an event, sent back as `Last-Event-ID`) instead of `tail`. */
  afterId?: number | undefined;
  /** Fallback poll of the database, for lines written by other processes. */
  pollMs?: number;
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs?: number;
  /** Headers to send along with the stream's own (request id, rate limit). */
  headers?: OutgoingHttpHeaders;
  /**
   * Asked every `accessCheckMs` whether the reader may still read: null, or why not (the member
   * was removed, the token revoked), which ends the stream.
   */
  checkAccess?: () => Promise<string | null>;
  accessCheckMs?: number;
  /** How a line is written into its event; default as it is (the dashboard sends it as HTML). */
  render?: (line: string) => string;
}

const BATCH = 1000;
const FINAL = new Set(['live', 'failed']);

/** One log line as an SSE event; a line holding line breaks becomes several `data:` fields. */
const lineEvent = (l: LogLine, render: (line: string) => string = (x) => x) =>
  `id: ${l.id}\n${render(l.line)
    .split(/\r\n|\r|\n/)
    .map((part) => `data: ${part}\n`)
    .join('')}\n`;

/** `Last-Event-ID` as a line id, when it is one. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value && /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

/**
 * Streams a deployment's log as `text/event-stream`: the last `tail` lines, then every new
 * line as it is appended, then `event: end` with the final state once the deployment is live
 * or failed. It wakes on appends in this process and polls for the others; it stops when the
 * client goes away. It never throws: once the stream has begun, an error can only end it.
 */
export async function streamLogs(
  deps: Pick<Deps, 'db' | 'log'>,
  res: ServerResponse,
  deploymentId: string,
  opts: StreamOptions,
): Promise<void> {
  const pollMs = opts.pollMs ?? 250;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const accessCheckMs = opts.accessCheckMs ?? 5_000;
  let accessCheckedAt = Date.now();
  let closed = false;
  let poked = false;
  let wake: (() => void) | undefined;

  const poke = () => {
    poked = true;
    wake?.();
  };
  const onClose = () => {
    closed = true;
    wake?.();
  };
  /** Sleeps until poked, closed or `pollMs` passed; a poke that came while we worked counts. */
  const rest = () =>
    new Promise<void>((resolve) => {
      if (poked || closed) return resolve();
      const done = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      wake = done;
    });
  /** Writes, then waits for the socket to drain so a slow reader cannot make us buffer a whole log. */
  const send = async (chunk: string) => {
    if (closed || chunk === '') return;
    if (res.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  };

  res.on('close', onClose);
  const unsubscribe = onDeploymentActivity(deploymentId, poke);
  const heartbeat = setInterval(() => {
    if (!closed) res.write(': heartbeat\n\n');
  }, heartbeatMs);
  try {
    res.writeHead(200, {
      ...opts.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx buffers responses unless told otherwise, which would hold lines back.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    let lastId = opts.afterId ?? 0;
    if (opts.afterId === undefined) {
      const history = await tailLines(deps, deploymentId, opts.type, opts.tail);
      await send(history.map((l) => lineEvent(l, opts.render)).join(''));
      lastId = history.at(-1)?.id ?? 0;
    }
    while (!closed) {
      poked = false;
      // The state is read before the lines: every line written before the deployment ended is
      // then already visible, so the last batch below is complete when the state is final.
      const state = await deps.db
        .selectFrom('deployments')
        .innerJoin('projects', 'projects.id', 'deployments.project_id')
        .select(['deployments.status', 'deployments.error_message', 'projects.deleted_at'])
        .where('deployments.id', '=', deploymentId)
        .executeTakeFirst();
      const lines = await linesAfter(deps, deploymentId, opts.type, lastId, BATCH);
      await send(lines.map((l) => lineEvent(l, opts.render)).join(''));
      lastId = lines.at(-1)?.id ?? lastId;
      if (lines.length === BATCH) continue;
      if (state && FINAL.has(state.status)) {
        const end: LogStreamEnd = { status: state.status, errorMessage: state.error_message };
        await send(`event: end\ndata: ${JSON.stringify(end)}\n\n`);
        return;
      }
      // A deleted project's deployment never finishes: close without claiming a final state.
      if (!state || state.deleted_at !== null) return;
      await rest();
      if (opts.checkAccess && Date.now() - accessCheckedAt >= accessCheckMs) {
        accessCheckedAt = Date.now();
        const refusal = await opts.checkAccess();
        if (refusal) {
          // A comment, then the end: a client that reconnects gets the API's 401 or 404 in words.
          await send(`: ${refusal}\n\n`);
          return;
        }
      }
    }
  } catch (err) {
    deps.log.error({ err, deploymentId }, 'log stream failed');
  } finally {
    clearInterval(heartbeat);
    unsubscribe();
    res.off('close', onClose);
    if (!res.writableEnded) res.end();
  }
}

/**
 * `GET /deployments/<id>/logs?follow=true`: checks access while errors can still be answered
 * normally, then calls `open` (which takes the response over from the framework) and streams.
 */
export async function followLogs(
  deps: Deps,
  actor: Actor,
  deploymentId: string,
  q: { type: LogType; tail: number; afterId?: number | undefined },
  open: () => { res: ServerResponse; headers: Record<string, string | number | string[] | undefined> },
): Promise<void> {
  const { deployment } = await requireDeployment(deps, actor, deploymentId, 'viewer');
  const { res, headers } = open();
  const present: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) present[name] = value;
  await streamLogs(deps, res, deployment.id, {
    ...q,
    headers: present,
    checkAccess: () => stillAllowed(deps, actor, deployment.id),
  });
}

/**
 * Whether a reader may go on reading, asked of the database itself (not the token cache), so a
 * revocation or a removal made by any process ends the streams of every process.
 */
async function stillAllowed(deps: Deps, actor: Actor, deploymentId: string): Promise<string | null> {
  const token = await deps.db
    .selectFrom('tokens')
    .select('id')
    .where('id', '=', actor.tokenId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!token) return 'the token was revoked';
  try {
    await requireDeployment(deps, actor, deploymentId, 'viewer');
    return null;
  } catch (err) {
    if (err instanceof ApiError) return 'no longer a member of the organization';
    throw err;
  }
}

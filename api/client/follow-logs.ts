import { ApiError } from '../errors.ts';
import { pathOf } from '../routes/contract.ts';
import { deployments } from '../routes/deployments.ts';
import { envelope } from '../schemas/common.ts';
import { DeploymentLogs, LogStreamEnd } from '../schemas/deployments.ts';
import { type Caller, readJson } from './envelope.ts';
import { invalidResponse, networkError } from './errors.ts';
import type { Http } from './http.ts';
import type { LogsQueryInput } from './inputs.ts';
import { backoffDelay } from './retry.ts';
import { parseSse } from './sse.ts';

/** What a followed log stream yields. */
export type LogEvent =
  /** One log line; `id` is the stream's event id (resumes after it on reconnect). */
  | { kind: 'line'; line: string; id: string | undefined }
  /** The deployment ended: `live` or `failed`, with `errorMessage` when it failed. */
  | ({ kind: 'end' } & LogStreamEnd);

export interface FollowOptions extends LogsQueryInput {
  /** Stops following and closes the connection. */
  signal?: AbortSignal;
}

const FINAL = new Set(['live', 'failed']);

/**
 * Follows `GET /v1/deployments/<id>/logs?follow=true` (text/event-stream): yields every line as
 * it is written, then one `end` event once the deployment is live or failed. A dropped
 * connection is resumed with `Last-Event-ID`, so no line is lost or repeated; a stream that
 * closes without `end` is checked against the deployment's state. Breaking out of the loop
 * closes the connection.
 */
export async function* followLogEvents(
  http: Http,
  caller: Caller,
  deploymentId: string,
  opts: FollowOptions = {},
): AsyncGenerator<LogEvent, void, undefined> {
  const path = pathOf(deployments.logs, { deploymentId });
  const what = `GET ${path}`;
  const { retries, sleep, random, baseDelayMs, maxDelayMs } = http.settings;
  let lastId: string | undefined;
  let lastNumber = -1;
  let failures = 0;
  let retryMs: number | undefined;

  for (;;) {
    const controller = new AbortController();
    const onAbort = () => controller.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let cause: unknown = 'the stream closed before the deployment ended';
    try {
      const res = await http.open('GET', path, {
        query: { type: opts.type, tail: opts.tail, follow: true },
        accept: 'text/event-stream',
        headers: lastId === undefined ? {} : { 'last-event-id': lastId },
        signal: controller.signal,
      });
      if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
        // A server (or proxy) that does not stream answers the plain tail: pass it on and stop.
        const parsed = envelope(DeploymentLogs).safeParse(await readJson(res, what));
        if (!parsed.success) throw invalidResponse(what, res.status, parsed.error);
        for (const line of parsed.data.data.logs === '' ? [] : parsed.data.data.logs.split('\n')) {
          yield { kind: 'line', line, id: undefined };
        }
        return;
      }
      for await (const ev of parseSse(res.body ?? emptyBody())) {
        failures = 0;
        if (ev.retry !== undefined) retryMs = ev.retry;
        if (ev.event === 'end') {
          yield { kind: 'end', ...parseEnd(ev.data, what, res.status) };
          return;
        }
        if (ev.event !== 'message') continue;
        // Line ids grow; one at or below the last seen is a repeat sent after a reconnect.
        const n = ev.id !== undefined && /^\d+$/.test(ev.id) ? Number(ev.id) : undefined;
        if (n !== undefined && n <= lastNumber) continue;
        if (n !== undefined) lastNumber = n;
        lastId = ev.id ?? lastId;
        for (const line of ev.data.split('\n')) yield { kind: 'line', line, id: ev.id };
      }
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (err instanceof ApiError) throw err;
      cause = err;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
    // The stream ended without `end`: a deployment already over needs no reconnect.
    const deployment = await caller.call(
      deployments.get,
      { deploymentId },
      {
        signal: opts.signal,
      },
    );
    if (FINAL.has(deployment.status)) {
      yield { kind: 'end', status: deployment.status, errorMessage: deployment.errorMessage };
      return;
    }
    failures++;
    if (failures > retries) throw networkError(what, cause, failures, http.address);
    await sleep(retryMs ?? backoffDelay(failures, baseDelayMs, maxDelayMs, random), opts.signal);
  }
}

/** Only the lines of `followLogEvents`; the generator's return value is the end state (null if unknown). */
export async function* followLogLines(
  http: Http,
  caller: Caller,
  deploymentId: string,
  opts: FollowOptions = {},
): AsyncGenerator<string, LogStreamEnd | null, undefined> {
  for await (const ev of followLogEvents(http, caller, deploymentId, opts)) {
    if (ev.kind === 'end') return { status: ev.status, errorMessage: ev.errorMessage };
    yield ev.line;
  }
  return null;
}

function parseEnd(data: string, what: string, status: number): LogStreamEnd {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    json = data;
  }
  const parsed = LogStreamEnd.safeParse(json);
  if (!parsed.success) throw invalidResponse(what, status, parsed.error);
  return parsed.data;
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

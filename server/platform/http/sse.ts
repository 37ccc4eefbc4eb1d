import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** One Server-Sent Event, or a comment line (`: ...`) when only `comment` is set. */
export interface SseFrame {
  id?: string | number;
  event?: string;
  /** Written as one `data:` field per line: a value holding line breaks stays one event. */
  data?: string;
  comment?: string;
}

/** The text of a frame, as the event-stream format has it (blank line included). */
export function sseFrame(f: SseFrame): string {
  let out = '';
  if (f.comment !== undefined) out += `: ${f.comment.replace(/\r\n|\r|\n/g, ' ')}\n`;
  if (f.id !== undefined) out += `id: ${f.id}\n`;
  if (f.event !== undefined) out += `event: ${f.event}\n`;
  if (f.data !== undefined) {
    for (const part of f.data.split(/\r\n|\r|\n/)) out += `data: ${part}\n`;
  }
  return `${out}\n`;
}

export interface EventStreamOptions {
  /** Headers to send along with the stream's own (request id, rate limit, cache-control). */
  headers?: OutgoingHttpHeaders;
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs?: number;
  log: Pick<Logger, 'error'>;
}

/**
 * Sends `events` as `text/event-stream` on a response the framework has handed over: each batch
 * in one write, waiting for the socket to drain so a slow reader cannot make the server buffer,
 * heartbeats while idle, and `signal` aborted when the client goes away (the producer stops
 * there). It never throws: once the stream has begun, an error can only end it.
 */
export async function sendEventStream(
  res: ServerResponse,
  events: (signal: AbortSignal) => AsyncIterable<SseFrame[]>,
  opts: EventStreamOptions,
): Promise<void> {
  const gone = new AbortController();
  const onClose = () => gone.abort();
  const write = async (chunk: string) => {
    if (gone.signal.aborted || chunk === '') return;
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
  const heartbeat = setInterval(() => {
    if (!gone.signal.aborted) res.write(sseFrame({ comment: 'heartbeat' }));
  }, opts.heartbeatMs ?? 15_000);
  try {
    res.writeHead(200, {
      ...opts.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx buffers responses unless told otherwise, which would hold events back.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    for await (const batch of events(gone.signal)) {
      await write(batch.map(sseFrame).join(''));
      if (gone.signal.aborted) break;
    }
  } catch (err) {
    opts.log.error({ err }, 'event stream failed');
  } finally {
    clearInterval(heartbeat);
    res.off('close', onClose);
    if (!res.writableEnded) res.end();
  }
}

/** Headers set on a Fastify reply so far, without the unset ones, for a stream to send along. */
export function presentHeaders(
  headers: Record<string, string | number | string[] | undefined>,
): OutgoingHttpHeaders {
  const present: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) present[name] = value;
  return present;
}

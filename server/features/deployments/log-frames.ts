import type { LogEvent } from './follow-logs.ts';
import type { SseFrame } from '../../platform/http/sse.ts';

/**
 * A followed log as SSE frames: one event per line with its id (a reconnecting reader sends the
 * last one back as `Last-Event-ID`), `event: end` with the final state, and a comment saying why
 * the stream ends when the reader lost access (a reconnect then gets the API's 401 or 404).
 */
export async function* logFrames(
  events: AsyncIterable<LogEvent>,
  render: (line: string) => string = (line) => line,
): AsyncGenerator<SseFrame[]> {
  for await (const e of events) {
    if (e.type === 'lines') yield e.lines.map((l) => ({ id: l.id, data: render(l.line) }));
    else if (e.type === 'end') yield [{ event: 'end', data: JSON.stringify(e.end) }];
    else yield [{ comment: e.reason }];
  }
}

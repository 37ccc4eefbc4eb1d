/** One server-sent event, as the HTML standard's parser dispatches it. */
export interface SseEvent {
  /** The `event:` field; `message` when the event names none. */
  event: string;
  /** The `data:` lines joined with newlines. */
  data: string;
  /** The last `id:` seen so far in the stream (it carries over to later events), or undefined. */
  id: string | undefined;
  /** A `retry:` reconnection delay in milliseconds sent with this event, if any. */
  retry: number | undefined;
}

/**
 * Parses a `text/event-stream` body into events, following the HTML standard: lines end with
 * CRLF, LF or CR; `:` starts a comment; an empty line dispatches; an event without data is
 * dropped; an unfinished event at the end of the stream is dropped too.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let first = true;
  let data: string[] = [];
  let event = '';
  let lastId: string | undefined;
  let retry: number | undefined;

  const take = function* (line: string): Generator<SseEvent> {
    if (line === '') {
      if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id: lastId, retry };
      data = [];
      event = '';
      retry = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
  };

  const drain = function* (final: boolean): Generator<SseEvent> {
    for (;;) {
      const cut = buffer.search(/[\r\n]/);
      if (cut === -1) return;
      // A CR at the very end may be the first half of a CRLF split across two chunks.
      if (buffer[cut] === '\r' && cut === buffer.length - 1 && !final) return;
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(buffer[cut] === '\r' && buffer[cut + 1] === '\n' ? cut + 2 : cut + 1);
      yield* take(line);
    }
  };

  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    if (first && buffer.length > 0) {
      if (buffer.startsWith('\uFEFF')) buffer = buffer.slice(1);
      first = false;
    }
    yield* drain(false);
  }
  buffer += decoder.decode();
  yield* drain(true);
}

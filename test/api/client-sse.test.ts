import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.ts';
import { createClient } from '../../api/client/index.ts';
import { parseSse, type SseEvent } from '../../api/client/sse.ts';
import { sendJson, startStub, type StubServer } from '../helpers/stub-server.ts';
import { deployment, failure, ids, ok } from './client-fixtures.ts';

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

async function events(...parts: string[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const ev of parseSse(chunks(...parts))) out.push(ev);
  return out;
}

describe('parseSse', () => {
  it('parses fields, comments, multi-line data and ids the way browsers do', async () => {
    expect(
      await events(
        '\uFEFF: heartbeat\n\n',
        'id: 1\ndata: first\n\n',
        'data: two\ndata:  lines\n\n',
        'event: end\ndata: {"status":"live"}\nretry: 250\n\n',
        'event: ignored\n\n',
        'data\n\n',
        'data: unfinished',
      ),
    ).toEqual([
      { event: 'message', data: 'first', id: '1', retry: undefined },
      // The id carries over to later events; only one space after the colon is dropped.
      { event: 'message', data: 'two\n lines', id: '1', retry: undefined },
      { event: 'end', data: '{"status":"live"}', id: '1', retry: 250 },
      { event: 'message', data: '', id: '1', retry: undefined },
    ]);
  });

  it('handles CRLF, CR and line ends and characters split across chunks', async () => {
    const euro = new TextEncoder().encode('data: 5 €\r\n\r\n');
    async function* split(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('id: 7\r');
      yield new TextEncoder().encode('\ndata: a\r\rdata: b\r');
      yield new TextEncoder().encode('\n\n');
      // The euro sign's three bytes arrive in two chunks.
      yield euro.slice(0, 10);
      yield euro.slice(10);
    }
    const out: SseEvent[] = [];
    for await (const ev of parseSse(split())) out.push(ev);
    expect(out.map((e) => [e.id, e.data])).toEqual([
      ['7', 'a'],
      ['7', 'b'],
      ['7', '5 €'],
    ]);
  });
});

describe('followLogs (stub server)', () => {
  let stub: StubServer | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  const sse = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const clientFor = (url: string) => {
    const sleeps: number[] = [];
    const client = createClient({
      baseUrl: url,
      token: 'slw_test',
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    return { client, sleeps };
  };

  it('yields each line and returns the end state', async () => {
    stub = await startStub((_req, res) => {
      sse(res);
      res.write('id: 1\ndata: Installing\n\n');
      res.write(': heartbeat\n\nid: 2\ndata: Building\ndata: Done\n\n');
      res.end('event: end\ndata: {"status":"failed","errorMessage":"exit 1"}\n\n');
    });
    const { client } = clientFor(stub.url);
    const it = client.deployments.followLogs(ids.deployment, { type: 'build', tail: 50 });
    const lines: string[] = [];
    let step = await it.next();
    while (!step.done) {
      lines.push(step.value);
      step = await it.next();
    }
    expect(lines).toEqual(['Installing', 'Building', 'Done']);
    expect(step.value).toEqual({ status: 'failed', errorMessage: 'exit 1' });
    const [req] = stub.requests;
    expect(req!.url).toBe(`/v1/deployments/${ids.deployment}/logs?type=build&tail=50&follow=true`);
    expect(req!.headers.accept).toBe('text/event-stream');
    expect(req!.headers['last-event-id']).toBeUndefined();
  });

  it('resumes a dropped stream with Last-Event-ID and skips lines seen before', async () => {
    stub = await startStub((req, res) => {
      if (req.url === `/v1/deployments/${ids.deployment}`)
        return sendJson(res, 200, ok(deployment({ status: 'building' })));
      sse(res);
      if (req.headers['last-event-id'] === undefined) {
        res.write('id: 1\ndata: one\n\nid: 2\ndata: two\n\n');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.write('id: 2\ndata: two\n\nid: 3\ndata: three\n\n');
      res.end('event: end\ndata: {"status":"live","errorMessage":null}\n\n');
    });
    const { client, sleeps } = clientFor(stub.url);
    const seen = [];
    for await (const ev of client.deployments.followLogEvents(ids.deployment)) seen.push(ev);
    expect(seen).toEqual([
      { kind: 'line', line: 'one', id: '1' },
      { kind: 'line', line: 'two', id: '2' },
      { kind: 'line', line: 'three', id: '3' },
      { kind: 'end', status: 'live', errorMessage: null },
    ]);
    const logRequests = stub.requests.filter((r) => r.url.includes('/logs'));
    expect(logRequests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '2']);
    expect(sleeps).toHaveLength(1);
  });

  it('ends with the deployment’s state when the stream closes without an end event', async () => {
    stub = await startStub((req, res) => {
      if (!req.url.includes('/logs')) {
        return sendJson(res, 200, ok(deployment({ status: 'failed', errorMessage: 'build timed out' })));
      }
      sse(res);
      res.end('id: 9\ndata: last words\n\n');
    });
    const { client } = clientFor(stub.url);
    const seen = [];
    for await (const ev of client.deployments.followLogEvents(ids.deployment)) seen.push(ev);
    expect(seen).toEqual([
      { kind: 'line', line: 'last words', id: '9' },
      { kind: 'end', status: 'failed', errorMessage: 'build timed out' },
    ]);
  });

  it('passes on the plain tail when the server answers JSON instead of a stream', async () => {
    stub = await startStub((_req, res) => sendJson(res, 200, ok({ logs: 'a\nb', type: 'build' })));
    const lines: string[] = [];
    for await (const line of clientFor(stub.url).client.deployments.followLogs(ids.deployment))
      lines.push(line);
    expect(lines).toEqual(['a', 'b']);
  });

  it('closes the connection when the caller stops reading', async () => {
    let closed: Promise<void> | undefined;
    stub = await startStub((_req, res) => {
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      sse(res);
      res.write('id: 1\ndata: first\n\n');
    });
    for await (const line of clientFor(stub.url).client.deployments.followLogs(ids.deployment)) {
      expect(line).toBe('first');
      break;
    }
    await closed;
    expect(stub.requests).toHaveLength(1);
  });

  it('throws the ApiError of an error answer', async () => {
    stub = await startStub((_req, res) => sendJson(res, 404, failure('NOT_FOUND', 'Deployment not found')));
    const follow = clientFor(stub.url).client.deployments.followLogs(ids.deployment);
    const err: unknown = await follow.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'Deployment not found' });
  });
});

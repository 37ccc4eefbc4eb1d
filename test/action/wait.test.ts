import { afterEach, describe, expect, it } from 'vitest';
import { POLL_FIRST_MS, POLL_MAX_MS, waitForDeployment } from '../../action/wait.ts';
import type { Runner } from '../../action/runner.ts';
import { createClient } from '../../api/client/index.ts';
import type { Deployment, DeploymentStatus } from '../../api/schemas/deployments.ts';
import { startStub, type StubServer } from '../helpers/stub-server.ts';

const ID = 'dpl_0123456789abcdefghij';

const deployment = (status: DeploymentStatus, extra: Partial<Deployment> = {}): Deployment => ({
  id: ID,
  projectId: 'prj_0123456789abcdefghij',
  status,
  target: 'preview',
  branch: 'main',
  commitHash: null,
  commitMessage: null,
  author: null,
  message: null,
  buildDurationMs: null,
  deployDurationMs: null,
  url: 'http://x.localhost',
  errorMessage: null,
  rollbackFrom: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  readyAt: null,
  promotedAt: null,
  ...extra,
});

/** A Runner that keeps what the action would print. */
function recordingRunner() {
  const lines: string[] = [];
  const runner: Runner = {
    getInput: () => '',
    info: (l) => lines.push(l),
    warning: (m) => lines.push(`warning: ${m}`),
    notice: (m) => lines.push(`notice: ${m}`),
    startGroup: (t) => lines.push(`group: ${t}`),
    endGroup: () => lines.push('endgroup'),
    setOutput: () => undefined,
    setSecret: () => undefined,
    setFailed: (m) => lines.push(`failed: ${m}`),
    writeSummary: async () => undefined,
  };
  return { runner, lines };
}

/**
 * Waiting against a real HTTP server whose answers the test picks: the stream (one request for
 * the whole build) and the fallback when it breaks (polling every 5 seconds or more, never faster).
 */
describe('waitForDeployment', () => {
  let stub: StubServer | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  const json = (body: unknown) => JSON.stringify({ success: true, data: body });

  it('follows the log stream into a group, then reads the deployment once', async () => {
    stub = await startStub((req, res) => {
      if (req.url.includes('/logs')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          'id: 1\ndata: installing\n\nid: 2\ndata: Error: boom\n\nevent: end\ndata: {"status":"failed","errorMessage":"build exited with 1"}\n\n',
        );
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(json(deployment('failed', { errorMessage: 'build exited with 1' })));
    });
    const { runner, lines } = recordingRunner();
    const client = createClient({ baseUrl: stub.url, token: 't' });
    const r = await waitForDeployment(
      { client, runner, now: Date.now, sleep: () => Promise.reject(new Error('must not sleep')) },
      deployment('queued'),
      { timeoutMs: 10_000, streamLogs: true, title: 'Build log' },
    );
    expect(r).toMatchObject({ timedOut: false, logTail: ['installing', 'Error: boom'] });
    expect(r.deployment.status).toBe('failed');
    expect(lines).toEqual(['group: Build log', 'installing', 'Error: boom', 'endgroup']);
    expect(stub.requests.map((q) => `${q.method} ${q.url}`)).toEqual([
      `GET /v1/deployments/${ID}/logs?tail=10000&follow=true`,
      `GET /v1/deployments/${ID}`,
    ]);
  });

  it('falls back to polling with a growing pause of at least 5 seconds when the stream fails', async () => {
    let reads = 0;
    stub = await startStub((req, res) => {
      if (req.url.includes('/logs?') && req.url.includes('follow')) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ success: false, error: { code: 'INTERNAL_ERROR', message: 'stream broke' } }),
        );
        return;
      }
      if (req.url.includes('/logs')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(json({ logs: 'a\nb\nError: late', type: 'build' }));
        return;
      }
      reads++;
      const status = reads < 4 ? 'building' : 'failed';
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(json(deployment(status, { errorMessage: 'nope' })));
    });
    const { runner, lines } = recordingRunner();
    const pauses: number[] = [];
    const client = createClient({ baseUrl: stub.url, token: 't' });
    const r = await waitForDeployment(
      { client, runner, now: Date.now, sleep: async (ms) => void pauses.push(ms) },
      deployment('queued'),
      { timeoutMs: 10_000, streamLogs: false, title: 'Build log' },
    );
    expect(r.deployment.status).toBe('failed');
    expect(pauses).toEqual([POLL_FIRST_MS, 7_500, 11_250]);
    expect(Math.min(...pauses)).toBeGreaterThanOrEqual(5_000);
    expect(POLL_MAX_MS).toBe(30_000);
    expect(lines[0]).toMatch(
      /^warning: Following the build log of dpl_\w+ failed .*stream broke.*every 5 seconds or more/,
    );
    // Polling saw no lines: the end of the log is read once for the failure message.
    expect(r.logTail).toEqual(['a', 'b', 'Error: late']);
  });

  it('stops at the time limit and reports the last state seen', async () => {
    stub = await startStub((req, res) => {
      if (req.url.includes('/logs')) {
        // A stream that never ends: only the time limit stops it.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: 1\ndata: still going\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(json(deployment('building')));
    });
    const { runner } = recordingRunner();
    const client = createClient({ baseUrl: stub.url, token: 't' });
    const started = Date.now();
    const r = await waitForDeployment(
      { client, runner, now: Date.now, sleep: () => Promise.resolve() },
      deployment('queued'),
      { timeoutMs: 300, streamLogs: true, title: 'Build log' },
    );
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r).toMatchObject({ timedOut: true, logTail: ['still going'] });
    expect(r.deployment.status).toBe('building');
  });
});

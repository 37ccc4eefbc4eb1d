import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotRole, startBotRole } from '../../server/roles/bot.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { GITHUB_SECRET, startHarness, TestOctokit, type Harness } from './helpers/harness.ts';
import { pullRequest, pullRequestEvent, type PrSpec } from './helpers/payloads.ts';

/**
 * GitHub's deliveries go into the service's queue and are answered at once; the work happens
 * afterwards, survives a bot that stops mid-event, is retried when GitHub fails, and is done once.
 */
describe('durable GitHub events', () => {
  let h: Harness;
  const extra: BotRole[] = [];

  beforeAll(async () => {
    h = await startHarness({ bot: { eventPollMs: 200, shutdownGraceMs: 100 } });
  });
  afterAll(async () => {
    h.github.before = undefined;
    for (const b of extra) await b.stop();
    await h?.stop();
  });

  /** GitHub's delivery of an App event, signed, over HTTP to a bot. */
  async function deliver(botUrl: string, name: string, payload: unknown, id = randomUUID()) {
    const body = JSON.stringify(payload);
    const res = await fetch(`${botUrl}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': name,
        'x-github-delivery': id,
        'x-hub-signature-256': await sign(GITHUB_SECRET, body),
      },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const open = (spec: PrSpec) => {
    h.github.pulls.set(spec.number, pullRequest(spec));
    return pullRequestEvent('opened', spec);
  };
  const deploymentsOf = async (sha: string) =>
    (await h.client.deployments.list(h.project.id, { limit: 100 })).data.filter(
      (d) => d.commitHash === sha || d.message?.includes(sha.slice(0, 7)),
    );

  it('answers 202 before any GitHub call, then does the work', async () => {
    const sha = h.push('durable-1', { 'message.txt': 'durable one' });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // GitHub is slow today: nothing is answered until the test lets it.
    h.github.before = async () => {
      await held;
    };
    const res = await deliver(
      h.botUrl,
      'pull_request',
      open({ number: 41, headSha: sha, headRef: 'durable-1' }),
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ ok: true, duplicate: false });
    expect(h.github.checks(sha, 'Slipway Preview')).toEqual([]);
    h.github.before = undefined;
    release();
    const done = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.conclusion === 'success', 30_000);
    expect(done.status).toBe('completed');
  });

  it('does a delivery GitHub sends twice only once', async () => {
    const sha = h.push('durable-2', { 'message.txt': 'durable two' });
    const id = randomUUID();
    const event = open({ number: 42, headSha: sha, headRef: 'durable-2' });
    const first = await deliver(h.botUrl, 'pull_request', event, id);
    const second = await deliver(h.botUrl, 'pull_request', event, id);
    expect(first.body.duplicate).toBe(false);
    expect(second.body).toMatchObject({ duplicate: true, id: first.body.id });
    await h.waitForCheck(sha, 'Slipway Preview', (r) => r.conclusion === 'success', 30_000);
    await h.bot.idle();
    expect(h.github.checks(sha, 'Slipway Preview')).toHaveLength(1);
    expect(await deploymentsOf(sha)).toHaveLength(1);
  });

  it('retries an event whose GitHub call failed, and finishes it', async () => {
    const sha = h.push('durable-3', { 'message.txt': 'durable three' });
    let failures = 0;
    h.github.before = async ({ method, path }) => {
      if (method === 'POST' && path.endsWith('/check-runs') && failures < 1) {
        failures++;
        return { status: 502, body: { message: 'Server Error' } };
      }
    };
    const res = await deliver(
      h.botUrl,
      'pull_request',
      open({ number: 43, headSha: sha, headRef: 'durable-3' }),
    );
    expect(res.status).toBe(202);
    const done = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.conclusion === 'success', 30_000);
    expect(done.status).toBe('completed');
    expect(failures).toBe(1);
    h.github.before = undefined;
    await h.bot.idle();
    expect(await deploymentsOf(sha)).toHaveLength(1);
  });

  it('hands an event back when the bot stops mid-event; the next bot finishes it, once', async () => {
    const sha = h.push('durable-4', { 'message.txt': 'durable four' });
    let stuck = 0;
    // GitHub never answers the first process's check run: that process is as good as dead.
    h.github.before = ({ method, path }) =>
      method === 'POST' && path.endsWith('/check-runs') && stuck++ === 0
        ? new Promise(() => undefined)
        : Promise.resolve();
    const res = await deliver(
      h.botUrl,
      'pull_request',
      open({ number: 44, headSha: sha, headRef: 'durable-4' }),
    );
    expect(res.status).toBe(202);
    await waitFor('the first bot to be stuck in its GitHub call', () => stuck === 1, 20_000);
    const stopped = Date.now();
    await h.bot.stop();
    expect(Date.now() - stopped).toBeLessThan(5_000);

    // The next process takes the same address (as a restart does): the service's webhooks reach it there.
    const next = await startBotRole({
      env: h.botEnv,
      log: pino({ level: 'silent' }),
      Octokit: TestOctokit,
      eventPollMs: 200,
    });
    extra.push(next);
    const done = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.conclusion === 'success', 30_000);
    expect(done.status).toBe('completed');
    await next.idle();
    expect(await deploymentsOf(sha)).toHaveLength(1);
    expect(h.github.checks(sha, 'Slipway Preview').filter((r) => r.conclusion === 'success')).toHaveLength(1);
  });
});

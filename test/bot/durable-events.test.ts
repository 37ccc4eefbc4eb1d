import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../server/core/free-port.ts';
import { type BotRole, startBotRole } from '../../server/roles/bot.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { GITHUB_SECRET, startHarness, TestOctokit, type Harness } from './helpers/harness.ts';
import { mergedEvent, pullRequest, pullRequestEvent, type PrSpec } from './helpers/payloads.ts';

/**
 * GitHub's deliveries go into the service's queue and are answered at once; the work happens
 * afterwards, survives a bot that stops mid-event, is retried when GitHub fails, and is done once.
 */
describe('durable GitHub events', () => {
  let h: Harness;
  const extra: BotRole[] = [];
  /** The bot's calls to the service, as `METHOD /path`. */
  const serviceCalls: string[] = [];

  beforeAll(async () => {
    h = await startHarness({
      bot: {
        eventPollMs: 200,
        shutdownGraceMs: 100,
        fetch: (input, init) => {
          serviceCalls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
          return fetch(input, init);
        },
      },
    });
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

  it('processes a signed merge once, however many delivery ids it is replayed under: one promotion', async () => {
    const spec = {
      number: 45,
      headSha: h.push('durable-5', { 'message.txt': 'durable five' }),
      headRef: 'durable-5',
    };
    await deliver(h.botUrl, 'pull_request', open(spec));
    const preview = await h.waitForCheck(
      spec.headSha,
      'Slipway Preview',
      (r) => r.conclusion === 'success',
      30_000,
    );
    await h.bot.idle();
    h.repo.git('merge', '-q', '--no-ff', '-m', 'Merge pull request #45', spec.headRef);
    const mergeSha = h.repo.git('rev-parse', 'HEAD');
    const merged = { ...spec, mergeSha };
    h.github.pulls.set(spec.number, pullRequest({ ...merged, state: 'closed', merged: true }));
    const deploymentsBefore = (await h.client.deployments.list(h.project.id)).meta.total;
    const promotesBefore = serviceCalls.filter((c) => c.endsWith('/promote')).length;

    // One capture of GitHub's signed delivery, sent again under new delivery ids: GitHub signs only the body.
    const payload = mergedEvent(merged);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await deliver(h.botUrl, 'pull_request', payload));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    await waitFor('the promotion', () => h.github.checks(mergeSha, 'Slipway Production').length > 0, 30_000);
    await new Promise((r) => setTimeout(r, 500)); // a second processing would have started by now
    await h.bot.idle();

    expect(serviceCalls.filter((c) => c.endsWith('/promote')).length - promotesBefore).toBe(1);
    expect(h.github.checks(mergeSha, 'Slipway Production')).toHaveLength(1);
    expect((await h.client.projects.get(h.project.id)).productionDeploymentId).toBe(preview.external_id);
    expect((await h.client.deployments.list(h.project.id)).meta.total).toBe(deploymentsBefore);
    expect(answers.map((a) => a.body.duplicate)).toEqual([false, true, true]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
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

  it('with an ordinary token the bot is refused the queue, handles deliveries itself, and a replay once', async () => {
    const { token } = await h.stack.user(); // not made with --github-app
    const port = await findFreePort();
    const plain = await startBotRole({
      env: { ...h.botEnv, SLIPWAY_API_TOKEN: token, BOT_PORT: String(port) },
      log: pino({ level: 'silent' }),
      Octokit: TestOctokit,
    });
    extra.push(plain);
    const spec = { number: 46, headSha: 'f'.repeat(40), headRef: 'durable-6', state: 'closed' as const };
    h.github.pulls.set(spec.number, pullRequest(spec));
    const payload = pullRequestEvent('closed', spec);
    const first = await deliver(`http://127.0.0.1:${port}`, 'pull_request', payload);
    const again = await deliver(`http://127.0.0.1:${port}`, 'pull_request', payload);
    expect(first).toEqual({ status: 200, body: { ok: true } });
    expect(again).toEqual({ status: 200, body: { ok: true, duplicate: true } });
  });
});

import { readFileSync } from 'node:fs';
import { sign } from '@octokit/webhooks-methods';
import pino from 'pino';
import { Probot } from 'probot';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HANDLED_EVENTS } from '../../bot/app.ts';
import { loadBotSettings } from '../../bot/settings.ts';
import slipwayBot from '../../bot/index.ts';
import { findFreePort } from '../../server/core/free-port.ts';
import { type BotRole, startBotRole } from '../../server/roles/bot.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { type BotGitHub, createBotGitHub } from './helpers/github.ts';
import { GITHUB_SECRET, SERVICE_SECRET, TestOctokit, testPrivateKey } from './helpers/harness.ts';
import { issueCommentEvent } from './helpers/payloads.ts';

describe('the bot role', () => {
  let github: BotGitHub;
  let repo: GitRepo;
  let bot: BotRole;
  let env: Record<string, string>;

  beforeAll(async () => {
    repo = createGitRepo({ files: { 'README.md': 'hi' } });
    github = await createBotGitHub(repo);
    const port = await findFreePort();
    env = {
      APP_ID: '1',
      PRIVATE_KEY: testPrivateKey(),
      WEBHOOK_SECRET: GITHUB_SECRET,
      // Nothing listens here: help needs no service.
      SLIPWAY_API_URL: `http://127.0.0.1:${await findFreePort()}`,
      SLIPWAY_API_TOKEN: 'slw_unused',
      SLIPWAY_WEBHOOK_SECRET: SERVICE_SECRET,
      BOT_PORT: String(port),
      BOT_HOST: '127.0.0.1',
      GITHUB_API_URL: github.url,
    };
    bot = await startBotRole({ env, log: pino({ level: 'silent' }), Octokit: TestOctokit });
  });
  afterAll(async () => {
    expect(github?.violations()).toEqual([]);
    await bot?.stop();
    await github?.stop();
    repo?.remove();
    vi.unstubAllEnvs();
  });

  async function deliver(payload: unknown, secret = GITHUB_SECRET) {
    const body = JSON.stringify(payload);
    return fetch(`${bot.url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'issue_comment',
        'x-github-delivery': crypto.randomUUID(),
        'x-hub-signature-256': await sign(secret, body),
      },
      body,
    });
  }

  it('takes signed GitHub webhooks at /api/github/webhooks and answers once handled', async () => {
    expect(bot.url).toBe(`http://localhost:${env.BOT_PORT}`);
    const res = await deliver(issueCommentEvent({ number: 60, body: '/slipway help', login: 'anyone' }));
    expect(res.status).toBe(200);
    expect(github.replies(60)).toHaveLength(1);
    expect(github.replies(60)[0]).toMatch(/^\*\*Slipway commands\*\*/);
  });

  it('refuses a GitHub webhook with a wrong signature', async () => {
    const res = await deliver(issueCommentEvent({ number: 61, body: '/slipway help', login: 'x' }), 'wrong');
    expect(res.status).toBe(400);
    expect(github.replies(61)).toEqual([]);
  });

  it('accepts the previous GitHub webhook secret too while it is rotated', async () => {
    const port = await findFreePort();
    const rotating = await startBotRole({
      env: {
        ...env,
        BOT_PORT: String(port),
        WEBHOOK_SECRET: 'the-new-github-secret',
        WEBHOOK_SECRET_PREVIOUS: GITHUB_SECRET,
      },
      log: pino({ level: 'silent' }),
      Octokit: TestOctokit,
    });
    try {
      const send = async (secret: string, number: number) => {
        const body = JSON.stringify(issueCommentEvent({ number, body: '/slipway help', login: 'anyone' }));
        return (
          await fetch(`${rotating.url}/api/github/webhooks`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-github-event': 'issue_comment',
              'x-github-delivery': crypto.randomUUID(),
              'x-hub-signature-256': await sign(secret, body),
            },
            body,
          })
        ).status;
      };
      expect(await send(GITHUB_SECRET, 63)).toBe(200);
      expect(await send('the-new-github-secret', 64)).toBe(200);
      expect(await send('neither-of-them', 65)).toBe(400);
      expect(github.replies(63)).toHaveLength(1);
      expect(github.replies(64)).toHaveLength(1);
      expect(github.replies(65)).toEqual([]);
    } finally {
      await rotating.stop();
    }
  });

  it('checks the App’s credentials at start, and names what is wrong or missing', async () => {
    await expect(
      startBotRole({
        env: { ...env, APP_ID: '2', BOT_PORT: String(await findFreePort()) },
        log: pino({ level: 'silent' }),
        Octokit: TestOctokit,
      }),
    ).rejects.toThrow(
      `GitHub refused the App's credentials (GET ${github.url}/app answered 401): APP_ID (2) and PRIVATE_KEY must belong to the same GitHub App`,
    );
    let message = '';
    try {
      loadBotSettings({ PRIVATE_KEY: testPrivateKey() });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("APP_ID is not set: the GitHub App's numeric id, from the App's settings page");
    expect(message).toContain('WEBHOOK_SECRET is not set:');
    expect(message).toContain('SLIPWAY_API_TOKEN is not set:');
    expect(message).not.toContain('Invalid input');
    expect(() => loadBotSettings({ ...env, PRIVATE_KEY: undefined })).toThrow(
      "PRIVATE_KEY is not set: the GitHub App's private key",
    );
  });

  it('answers /healthz and 404 elsewhere', async () => {
    expect(await (await fetch(`${bot.url}/healthz`)).json()).toEqual({ ok: true });
    expect((await fetch(`${bot.url}/nothing`)).status).toBe(404);
  });

  it('bot/index.ts is a Probot app configured from the environment', async () => {
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    const probot = new Probot({
      appId: 1,
      privateKey: testPrivateKey(),
      baseUrl: github.url,
      log: pino({ level: 'silent' }),
      Octokit: TestOctokit,
    });
    const handlers: unknown[] = [];
    await probot.load(slipwayBot, { cwd: process.cwd(), addHandler: (h) => handlers.push(h) });
    expect(handlers).toHaveLength(1);
    await probot.receive({
      id: 'x',
      name: 'issue_comment',
      payload: issueCommentEvent({ number: 62, body: '/slipway help', login: 'anyone' }),
    } as never);
    expect(github.replies(62)).toHaveLength(1);
  });

  it('app.yml asks for the least permissions and exactly the events the App handles', () => {
    const manifest = parse(readFileSync(new URL('../../app.yml', import.meta.url), 'utf8')) as Record<
      string,
      any
    >;
    expect(manifest.default_permissions).toEqual({
      checks: 'write',
      deployments: 'write',
      pull_requests: 'write',
      issues: 'write',
      contents: 'read',
      metadata: 'read',
    });
    expect([...manifest.default_events].sort()).toEqual([...HANDLED_EVENTS].sort());
    expect(manifest.hook_attributes.url).toMatch(/\/api\/github\/webhooks$/);
  });
});

import { randomUUID } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';
import { ensureBundle } from './bundle.ts';
import { pushEvent, REPOSITORY, runAction } from './run-action.ts';
import { createSiteRepo } from './site.ts';

const AUDIENCE = 'https://slipway.test';

/**
 * The bundled action without api-token: it asks the runner for the job's OIDC token (a local
 * stand-in for GitHub's token service, keys made here) and deploys with the token the project's
 * trust policy gives for it.
 */
describe('the action without a stored token (OIDC)', () => {
  let s: Stack;
  let github: Server;
  let githubUrl: string;
  let projectId: string;
  let head: string;
  const asked: string[] = [];

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' };
    github = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/.well-known/openid-configuration') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ issuer: githubUrl, jwks_uri: `${githubUrl}/.well-known/jwks` }));
        return;
      }
      if (url.pathname === '/.well-known/jwks') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
        return;
      }
      // The runner's token service: ACTIONS_ID_TOKEN_REQUEST_URL with the job's request token.
      if (url.pathname === '/token' && req.headers.authorization === 'Bearer job-request-token') {
        const audience = url.searchParams.get('audience') ?? '';
        asked.push(audience);
        const now = Math.floor(Date.now() / 1000);
        // A new token for every request, each with its own jti, as GitHub's token service does.
        void new SignJWT({
          jti: randomUUID(),
          repository: REPOSITORY,
          repository_id: '777',
          ref: 'refs/heads/main',
          event_name: 'push',
        })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer(githubUrl)
          .setAudience(audience)
          .setIssuedAt(now)
          .setExpirationTime(now + 300)
          .sign(pair.privateKey)
          .then((value) =>
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ value })),
          );
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => github.listen(0, '127.0.0.1', r));
    githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
    [, s] = await Promise.all([
      ensureBundle(),
      startStack({ env: { SLIPWAY_OIDC_ISSUER: githubUrl, SLIPWAY_OIDC_AUDIENCE: AUDIENCE } }),
    ]);
    const { token, orgId } = await s.user('admin@example.com');
    const repo = createSiteRepo();
    head = repo.git('rev-parse', 'HEAD');
    const client = s.client(token);
    projectId = (
      await client.projects.create({ name: 'site', repositoryUrl: repo.url, organizationId: orgId })
    ).id;
    const res = await fetch(`${s.apiUrl}/v1/projects/${projectId}/trust-policies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ repository: REPOSITORY, repositoryId: 777, refs: ['refs/heads/main'] }),
    });
    expect(res.status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await s?.stop();
    await new Promise((r) => github?.close(r));
  });

  it('deploys with the token its OIDC token is exchanged for, masked in the log', async () => {
    const event = pushEvent({ sha: head, branch: 'main', message: 'keyless' });
    const r = await runAction({
      inputs: { 'api-url': s.apiUrl, project: 'site', 'oidc-audience': AUDIENCE, comment: 'false' },
      event: event.event,
      env: {
        ...event.env,
        ACTIONS_ID_TOKEN_REQUEST_URL: `${githubUrl}/token?x=1`,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'job-request-token',
      },
    });
    expect(r.error, r.stdout).toBeNull();
    expect(asked).toEqual([AUDIENCE]);
    expect(r.stdout).toContain(`Exchanged the job's OIDC token for a short-lived token of ${projectId}.`);
    expect(r.stdout).toMatch(/::add-mask::slw_/);
    expect(r.outputs.status).toBe('live');
  });

  it('retries an exchange whose answer was lost with a new OIDC token, not the used one', async () => {
    // A proxy in front of the service loses the answer of the first exchange after the service
    // made it: the job token is used, and the step must not send it again.
    let lost = 0;
    const proxy = createServer((req, res) => {
      const upstream = request(
        new URL(req.url ?? '/', s.apiUrl),
        { method: req.method, headers: req.headers },
        (up) => {
          if (req.url === '/v1/oidc/token' && lost === 0) {
            lost++;
            up.resume();
            up.on('end', () => res.socket?.destroy());
            return;
          }
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.socket?.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const used = async () =>
      (await s.running.deps.db.selectFrom('used_oidc_tokens').select('jti').execute()).length;
    try {
      const before = { asked: asked.length, used: await used() };
      const event = pushEvent({ sha: head, branch: 'main', message: 'keyless, lost answer' });
      const r = await runAction({
        inputs: { 'api-url': proxyUrl, project: 'site', 'oidc-audience': AUDIENCE, comment: 'false' },
        event: event.event,
        env: {
          ...event.env,
          ACTIONS_ID_TOKEN_REQUEST_URL: `${githubUrl}/token?x=1`,
          ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'job-request-token',
        },
      });
      expect(r.error, r.stdout).toBeNull();
      expect(lost).toBe(1);
      expect(r.stdout).toContain('asking the runner for a new OIDC token and trying again (attempt 2 of 5)');
      // Two job tokens asked for and both exchanged: the first (its answer lost) is used up.
      expect(asked.length - before.asked).toBe(2);
      expect((await used()) - before.used).toBe(2);
      expect(r.outputs.status).toBe('live');
    } finally {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('says what to do when the job may not ask for an OIDC token', async () => {
    const r = await runAction({
      inputs: { 'api-url': s.apiUrl, project: 'site' },
      event: pushEvent({ sha: 'b'.repeat(40), branch: 'main', message: 'x' }).event,
    });
    expect(r.error).toContain('give the job `permissions: id-token: write`');
  });
});

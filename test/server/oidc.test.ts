import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

type CryptoKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { addMember } from '../helpers/members.ts';
import { runMonitoringTick } from '../../server/schedule/monitoring-tick.ts';

const AUDIENCE = 'https://slipway.test';

/**
 * Keyless deploys from GitHub Actions against a local OIDC issuer (keys made here, JWKS served on
 * 127.0.0.1): each kind of bad token is refused with the claim that failed, and the allowed job
 * deploys its project and nothing else.
 */
describe('trust policies and the OIDC exchange', () => {
  let t: TestApp;
  let clock: ManualClock;
  let issuer: Server;
  let issuerUrl: string;
  let keys: { privateKey: CryptoKey; jwk: JWK };
  let stranger: CryptoKey;
  let jwksRequests = 0;
  let discoveryRequests = 0;
  let alice: TestUser;
  let dev: TestUser;
  let projectId: string;
  let otherProjectId: string;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    keys = {
      privateKey: pair.privateKey,
      jwk: { ...(await exportJWK(pair.publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' },
    };
    stranger = (await generateKeyPair('RS256')).privateKey;
    issuer = createServer((req, res) => {
      // As GitHub's issuer: the discovery document names where the keys are (its jwks_uri).
      if (req.url === '/.well-known/openid-configuration') {
        discoveryRequests++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ issuer: issuerUrl, jwks_uri: `${issuerUrl}/keys/actions.json` }));
      } else if (req.url === '/keys/actions.json') {
        jwksRequests++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [keys.jwk] }));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => issuer.listen(0, '127.0.0.1', r));
    issuerUrl = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
    clock = new ManualClock();
    t = await createTestApp({
      clock,
      env: {
        SLIPWAY_OIDC_ISSUER: issuerUrl,
        SLIPWAY_OIDC_AUDIENCE: AUDIENCE,
        SLIPWAY_OIDC_KEYS_COOLDOWN: '1ms',
      },
    });
    alice = await t.user('alice@example.com');
    dev = await t.user('dev@example.com');
    await addMember(t, alice.orgId, dev, 'developer');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', alice.orgId)
      .execute();
    const make = async (name: string) =>
      (
        await t.call(alice, 'POST', '/v1/projects', {
          name,
          repositoryUrl: 'https://github.com/acme/web.git',
          organizationId: alice.orgId,
        })
      ).body.data.id as string;
    projectId = await make('web');
    otherProjectId = await make('other');
    const policy = await t.call(alice, 'POST', `/v1/projects/${projectId}/trust-policies`, {
      repository: 'acme/web',
      repositoryId: 4242,
      refs: ['refs/heads/main', 'refs/tags/v*'],
      events: ['push', 'workflow_dispatch'],
      workflow: '.github/workflows/deploy.yml',
    });
    expect(policy.status, policy.text).toBe(201);
    expect(policy.body.data).toMatchObject({
      repository: 'acme/web',
      repositoryId: '4242',
      role: 'developer',
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((r) => issuer?.close(r));
  });

  /** GitHub's claims for a push to main of acme/web by its deploy workflow, with `overrides`. */
  const claims = (overrides: Record<string, unknown> = {}) => ({
    repository: 'acme/web',
    repository_id: '4242',
    repository_owner: 'acme',
    ref: 'refs/heads/main',
    event_name: 'push',
    workflow_ref: 'acme/web/.github/workflows/deploy.yml@refs/heads/main',
    job_workflow_ref: 'acme/web/.github/workflows/deploy.yml@refs/heads/main',
    sub: 'repo:acme/web:ref:refs/heads/main',
    ...overrides,
  });
  async function jwt(
    overrides: Record<string, unknown> = {},
    opts: { key?: CryptoKey; kid?: string; aud?: string; exp?: number; iss?: string } = {},
  ) {
    const now = Math.floor(Date.now() / 1000);
    // A new jti for every token, as GitHub's token service gives.
    return new SignJWT({ jti: randomUUID(), ...claims(overrides) })
      .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? 'key-1', typ: 'JWT' })
      .setIssuer(opts.iss ?? issuerUrl)
      .setAudience(opts.aud ?? AUDIENCE)
      .setIssuedAt(now - 10)
      .setNotBefore(now - 10)
      .setExpirationTime(opts.exp ?? now + 300)
      .sign(opts.key ?? keys.privateKey);
  }
  const exchange = (token: string, project: string | undefined = projectId) =>
    t.call(null, 'POST', '/v1/oidc/token', { token, ...(project ? { project } : {}) });

  it('gives the allowed job a short-lived token that deploys its project, and nothing else', async () => {
    const res = await exchange(await jwt());
    expect(res.status, res.text).toBe(201);
    const scoped = res.body.data.token as string;
    expect(res.body.data).toMatchObject({
      projectId,
      role: 'developer',
      expiresAt: new Date(clock.now().getTime() + 15 * 60_000).toISOString(),
    });

    const deploy = await t.call(scoped, 'POST', `/v1/projects/${projectId}/deployments`, {
      message: 'from a workflow',
    });
    expect(deploy.status, deploy.text).toBe(201);
    expect((await t.call(scoped, 'GET', `/v1/deployments/${deploy.body.data.id}`)).status).toBe(200);

    expect((await t.call(scoped, 'POST', `/v1/projects/${otherProjectId}/deployments`, {})).status).toBe(404);
    const tokens = await t.call(scoped, 'POST', '/v1/user/tokens', { name: 'escape' });
    expect(tokens.status).toBe(403);
    expect(tokens.body.error.message).toContain('works only for deploying project');
    expect((await t.call(scoped, 'GET', '/v1/projects')).status).toBe(403);
    expect(
      (
        await t.call(scoped, 'POST', `/v1/projects/${projectId}/trust-policies`, {
          repository: 'x/y',
          repositoryId: 1,
        })
      ).status,
    ).toBe(403);
    // Not listed with its user's tokens, and unable to sign in to the dashboard.
    const listed = (await t.call(alice, 'GET', '/v1/user/tokens')).body.data.map(
      (x: { name: string }) => x.name,
    );
    expect(listed.some((n: string) => n.startsWith('github-actions'))).toBe(false);

    clock.advance(15 * 60_000 + 1000);
    const late = await t.call(scoped, 'GET', `/v1/projects/${projectId}`);
    expect(late.status).toBe(401);
    expect(late.body.error.message).toContain('has expired');
  });

  it('finds the project by the repository when none is named', async () => {
    const res = await exchange(await jwt(), undefined);
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.projectId).toBe(projectId);
  });

  it.each([
    [
      'a wrong audience',
      () => jwt({}, { aud: 'https://elsewhere.example' }),
      401,
      `its audience (aud) is not ${AUDIENCE}`,
    ],
    [
      'an expired token',
      () => jwt({}, { exp: Math.floor(Date.now() / 1000) - 3600 }),
      401,
      'it has expired (exp)',
    ],
    [
      'another issuer',
      () => jwt({}, { iss: 'https://token.actions.githubusercontent.com' }),
      401,
      'its issuer (iss) is not',
    ],
    [
      'another repository of the same name',
      () => jwt({ repository_id: '999' }),
      403,
      'No trust policy of project prj_',
    ],
    [
      'a renamed repository',
      () => jwt({ repository: 'acme/old-web' }),
      403,
      "repository acme/old-web is not the policy's acme/web",
    ],
    [
      'a branch not allowed',
      () => jwt({ ref: 'refs/heads/feature' }),
      403,
      'ref refs/heads/feature matches none of refs/heads/main, refs/tags/v*',
    ],
    [
      'an event not allowed',
      () => jwt({ event_name: 'pull_request' }),
      403,
      'event pull_request is not one of push, workflow_dispatch',
    ],
    [
      'another workflow',
      () => jwt({ job_workflow_ref: 'acme/web/.github/workflows/evil.yml@refs/heads/main' }),
      403,
      'workflow .github/workflows/evil.yml is not',
    ],
    [
      'a forged signature under the right kid',
      () => jwt({}, { key: stranger }),
      401,
      'its signature does not verify',
    ],
    [
      'an unknown kid',
      () => jwt({}, { key: stranger, kid: 'key-9' }),
      401,
      'the issuer has no key with its key id (kid)',
    ],
  ])('refuses %s, saying which check failed', async (_what, make, status, message) => {
    const token = await make();
    const res = await exchange(token);
    expect(res.status, res.text).toBe(status);
    expect(res.body.error.message).toContain(message);
    expect(res.text).not.toContain(token);
  });

  it('exchanges an OIDC token once: a replay is refused, saying to request a new one', async () => {
    const oidcTokens = () =>
      t.deps.db.selectFrom('tokens').select('id').where('source', '=', 'oidc').execute();
    const token = await jwt();
    const first = await exchange(token);
    expect(first.status, first.text).toBe(201);
    const before = (await oidcTokens()).length;
    // The replay: the same job token, as someone who copied it from a log or a proxy would send it.
    for (const project of [projectId, undefined]) {
      const again = await exchange(token, project);
      expect(again.status, again.text).toBe(401);
      expect(again.body.error).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(again.body.error.message).toContain('OIDC token refused: it was already exchanged');
      expect(again.body.error.message).toContain('request a new one from the runner');
      expect(again.text).not.toContain(token);
    }
    expect(await oidcTokens()).toHaveLength(before);
    // Another token of the same job (a new jti) is exchanged as before.
    expect((await exchange(await jwt())).status).toBe(201);
  });

  it('gives one token for one OIDC token sent many times at once', async () => {
    const token = await jwt();
    const answers = await Promise.all(Array.from({ length: 6 }, () => exchange(token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 401, 401, 401, 401, 401]);
    const used = await t.deps.db.selectFrom('used_oidc_tokens').selectAll().execute();
    const winner = answers.find((a) => a.status === 201)!;
    const row = await t.deps.db
      .selectFrom('tokens')
      .select('id')
      .where('prefix', '=', (winner.body.data.token as string).slice(0, 10))
      .executeTakeFirstOrThrow();
    expect(used.filter((u) => u.token_id === row.id)).toHaveLength(1);
  });

  it('refuses a token without a jti, which could not be told from its replay', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'RS256', kid: 'key-1', typ: 'JWT' })
      .setIssuer(issuerUrl)
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(keys.privateKey);
    const res = await exchange(token);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('OIDC token refused: its jti claim is missing');
  });

  it('keeps a used jti until the token expires, then the monitoring run drops it', async () => {
    const exp = Math.floor(Date.now() / 1000) + 120;
    const token = await jwt({}, { exp });
    expect((await exchange(token)).status).toBe(201);
    const { jti } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string };
    const mark = () =>
      t.deps.db.selectFrom('used_oidc_tokens').selectAll().where('jti', '=', jti).executeTakeFirst();
    // Kept while the exchange would still accept the token (exp, plus its 60 s of clock tolerance).
    expect((await mark())?.expires_at).toBe(new Date((exp + 60) * 1000).toISOString());
    clock.set(new Date((exp + 59) * 1000).toISOString());
    await runMonitoringTick(t.deps);
    expect(await mark()).toBeDefined();
    clock.set(new Date((exp + 61) * 1000).toISOString());
    await runMonitoringTick(t.deps);
    expect(await mark()).toBeUndefined();
  });

  it('refuses alg none, and a tag ref is allowed by its glob', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(
      JSON.stringify({ ...claims(), iss: issuerUrl, aud: AUDIENCE, iat: now, exp: now + 300 }),
    ).toString('base64url');
    const none = await exchange(`${header}.${body}.`);
    expect(none.status).toBe(401);
    expect(none.body.error.message).toContain('OIDC token refused');
    expect((await exchange(await jwt({ ref: 'refs/tags/v1.2.0' }))).status).toBe(201);
  });

  it('finds the keys through the issuer’s discovery document (its jwks_uri), read once', async () => {
    // The issuer serves its keys at /keys/actions.json, a path only its discovery document names.
    expect((await exchange(await jwt())).status).toBe(201);
    expect(jwksRequests).toBeGreaterThan(0);
    expect(discoveryRequests).toBe(1);
  });

  it('refreshes the issuer’s keys when a token names a new kid', async () => {
    const before = jwksRequests;
    const pair = await generateKeyPair('RS256', { extractable: true });
    keys = {
      privateKey: pair.privateKey,
      jwk: { ...(await exportJWK(pair.publicKey)), kid: 'key-2', alg: 'RS256', use: 'sig' },
    };
    await new Promise((r) => setTimeout(r, 5)); // past the (test's) cooldown
    const res = await exchange(await jwt({}, { kid: 'key-2' }));
    expect(res.status, res.text).toBe(201);
    expect(jwksRequests).toBe(before + 1);
    // A kid the issuer does not have, even after asking again, is refused.
    const unknown = await exchange(await jwt({}, { kid: 'key-3' }));
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toContain('no key with its key id');
  });

  it('refuses, saying why, a policy whose author has left the organization or lost the role', async () => {
    const bob = await t.user('bob@example.com');
    await addMember(t, alice.orgId, bob, 'admin');
    const solo = (
      await t.call(alice, 'POST', '/v1/projects', {
        name: 'solo',
        repositoryUrl: 'https://github.com/acme/solo.git',
        organizationId: alice.orgId,
      })
    ).body.data.id as string;
    const made = await t.call(bob, 'POST', `/v1/projects/${solo}/trust-policies`, {
      repository: 'acme/solo',
      repositoryId: 5151,
    });
    expect(made.status, made.text).toBe(201);
    const soloJob = async () =>
      exchange(await jwt({ repository: 'acme/solo', repository_id: '5151' }, { kid: keys.jwk.kid }), solo);
    expect((await soloJob()).status).toBe(201);

    const members = `/v1/organizations/${alice.orgId}/members/bob@example.com`;
    expect((await t.call(alice, 'PATCH', members, { role: 'viewer' })).status).toBe(200);
    const demoted = await soloJob();
    expect(demoted.status).toBe(403);
    expect(demoted.body.error.message).toBe(
      `The trust policy of project solo that accepts this job was made by bob@example.com, who is now viewer, below the policy's role developer: an admin of the project makes a new policy (POST /v1/projects/${solo}/trust-policies) and removes this one (DELETE /v1/projects/${solo}/trust-policies/${made.body.data.id})`,
    );
    expect((await t.call(alice, 'DELETE', members)).status).toBe(200);
    const left = await soloJob();
    expect(left.status).toBe(403);
    expect(left.body.error.message).toContain(
      'was made by bob@example.com, who is no longer a member of its organization, and its tokens act as them',
    );
    // The remedy the message names works: a policy of a current admin.
    await t.call(alice, 'DELETE', `/v1/projects/${solo}/trust-policies/${made.body.data.id}`);
    const remade = await t.call(alice, 'POST', `/v1/projects/${solo}/trust-policies`, {
      repository: 'acme/solo',
      repositoryId: 5151,
    });
    expect(remade.status).toBe(201);
    const ok = await soloJob();
    expect(ok.status, ok.text).toBe(201);
    const deployed = await t.call(ok.body.data.token as string, 'GET', `/v1/projects/${solo}/deployments`);
    expect(deployed.status).toBe(200);
  });

  it('lets only admins manage policies, and never grants more than developer', async () => {
    const owner = await t.call(alice, 'POST', `/v1/projects/${projectId}/trust-policies`, {
      repository: 'acme/web',
      repositoryId: 1,
      role: 'owner',
    });
    expect(owner.status).toBe(400);
    expect(owner.body.error.message).toContain(
      'role: must be viewer or developer: a workflow never gets admin or owner',
    );
    const byDev = await t.call(dev, 'POST', `/v1/projects/${projectId}/trust-policies`, {
      repository: 'acme/web',
      repositoryId: 1,
    });
    expect(byDev.status).toBe(403);
    const bad = await t.call(alice, 'POST', `/v1/projects/${projectId}/trust-policies`, {
      repository: 'not a repo',
      repositoryId: 'x',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('repository: must be owner/name');
    const list = await t.call(dev, 'GET', `/v1/projects/${projectId}/trust-policies`);
    expect(list.body.data).toHaveLength(1);
    const del = await t.call(
      alice,
      'DELETE',
      `/v1/projects/${projectId}/trust-policies/${list.body.data[0].id}`,
    );
    expect(del.status).toBe(200);
    const after = await exchange(await jwt({}, { kid: keys.jwk.kid }));
    expect(after.status).toBe(403);
    expect(after.body.error.message).toContain('No trust policy of project');
  });
});

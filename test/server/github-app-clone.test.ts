import { createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { loadConfig } from '../../server/platform/config.ts';
import { gitHostOf, githubRepositoryOf } from '../../server/features/github/installation-token.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { gitHttpHandler } from '../helpers/git-http-server.ts';
import { createGitHubApi, type GitHubApi } from '../helpers/github-api.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const APP_ID = '424242';
const INSTALLATION_ID = 77;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

/** True when `authorization` is `Bearer <a JWT of the App, signed with its key, current>`. */
function isAppJwt(authorization: string | undefined): boolean {
  const m = /^bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(authorization ?? '');
  if (!m) return false;
  const [, header, payload, signature] = m as unknown as [string, string, string, string];
  const signed = createVerify('RSA-SHA256')
    .update(`${header}.${payload}`)
    .verify(publicKey, Buffer.from(signature, 'base64url'));
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss: string; exp: number };
  return signed && String(claims.iss) === APP_ID && claims.exp * 1000 > Date.now();
}

describe('the GitHub App settings', () => {
  it('reads APP_ID, PRIVATE_KEY and GITHUB_API_URL, and knows which URLs are on that GitHub', () => {
    const base = { SLIPWAY_DATA_DIR: tmpdir() };
    expect(loadConfig(base).githubApp).toBeUndefined();
    const app = loadConfig({ ...base, APP_ID, PRIVATE_KEY: PRIVATE_KEY.replace(/\n/g, '\\n') }).githubApp!;
    expect(app).toEqual({ appId: APP_ID, privateKey: PRIVATE_KEY, apiUrl: 'https://api.github.com' });
    expect(() => loadConfig({ ...base, APP_ID: 'slipway', PRIVATE_KEY })).toThrow(
      /APP_ID must be the numeric id/,
    );
    expect(() => loadConfig({ ...base, APP_ID, PRIVATE_KEY: 'not a key' })).toThrow(/PRIVATE_KEY must be/);
    expect(() => loadConfig({ ...base, GITHUB_API_URL: 'ghe.example.com' })).toThrow(
      /GITHUB_API_URL must be/,
    );

    expect(gitHostOf('https://api.github.com')).toBe('github.com');
    expect(gitHostOf('https://ghe.example.com/api/v3')).toBe('ghe.example.com');
    expect(githubRepositoryOf(app, 'https://github.com/acme/web.git')).toEqual({
      owner: 'acme',
      repo: 'web',
    });
    expect(githubRepositoryOf(app, 'https://github.com/acme/web.js')).toEqual({
      owner: 'acme',
      repo: 'web.js',
    });
    for (const other of [
      'https://gitlab.com/acme/web.git',
      'git@github.com:acme/web.git',
      'https://github.com/acme',
      'https://github.com/acme/web/tree/main',
      '/srv/repos/web',
    ]) {
      expect(githubRepositoryOf(app, other), other).toBeNull();
    }
  });
});

/**
 * A GitHub Enterprise Server stand-in on 127.0.0.1: its REST API under /api/v3 (checked against
 * GitHub's OpenAPI description, minting installation tokens) and git's smart HTTP on the same
 * host, which lets a clone in only with a token it minted.
 */
describe('private GitHub repositories through the App', () => {
  let s: Stack;
  let repo: GitRepo;
  let gh: GitHubApi;
  let root: string;
  let git: ReturnType<typeof gitHttpHandler>;
  const minted: { token: string; body: unknown }[] = [];
  const badJwts: string[] = [];

  beforeAll(async () => {
    repo = createGitRepo({ files: { 'index.html': '<h1>private via the App</h1>' } });
    root = mkdtempSync(join(tmpdir(), 'slipway-ghes-'));
    chmodSync(root, 0o755);
    mkdirSync(join(root, 'acme'), { mode: 0o755 });
    symlinkSync(repo.dir, join(root, 'acme', 'private.git'));
    symlinkSync(repo.dir, join(root, 'acme', 'elsewhere.git'));
    git = gitHttpHandler(root, {
      auth: (user, password) => user === 'x-access-token' && minted.some((m) => m.token === password),
    });
    gh = await createGitHubApi({ web: git });
    gh.on('GET /repos/{owner}/{repo}/installation', ({ params, headers }) => {
      if (!isAppJwt(headers.authorization)) badJwts.push(String(headers.authorization));
      if (params.repo !== 'private') return { status: 404, body: { message: 'Not Found' } };
      return {
        body: {
          id: INSTALLATION_ID,
          account: { login: params.owner },
          app_id: Number(APP_ID),
          target_type: 'Organization',
        },
      };
    });
    gh.on('POST /app/installations/{installation_id}/access_tokens', ({ params, body, headers }) => {
      if (!isAppJwt(headers.authorization)) badJwts.push(String(headers.authorization));
      if (Number(params.installation_id) !== INSTALLATION_ID)
        return { status: 404, body: { message: 'Not Found' } };
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      minted.push({ token, body });
      return {
        status: 201,
        body: {
          token,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          repository_selection: 'selected',
        },
      };
    });
    s = await startStack({
      env: {
        APP_ID,
        PRIVATE_KEY,
        GITHUB_API_URL: `${gh.url}/api/v3`,
        SLIPWAY_SANDBOX_HOST_PORTS: new URL(gh.url).port,
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
    await gh?.stop();
    repo?.remove();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const finished = (api: ReturnType<Stack['client']>, id: string) =>
    waitFor(
      `deployment ${id} to finish`,
      async (): Promise<Deployment | null> => {
        const got = await api.deployments.get(id);
        return got.status === 'live' || got.status === 'failed' ? got : null;
      },
      30_000,
    );

  it('clones with a token minted for that repository alone, and never shows or keeps it', async () => {
    const { token, orgId } = await s.user();
    const api = s.client(token);
    const project = await api.projects.create({
      name: 'private-app',
      repositoryUrl: `${gh.url}/acme/private.git`,
      organizationId: orgId,
    });
    const { id } = await api.deployments.create(project.id);
    const d = await finished(api, id);
    expect(d.errorMessage).toBeNull();
    expect(d.status).toBe('live');
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>private via the App</h1>');

    // One token, asked for exactly this repository with read access to its contents.
    expect(minted).toHaveLength(1);
    expect(minted[0]!.body).toEqual({ repositories: ['private'], permissions: { contents: 'read' } });
    expect(git.credentials).toContain(`x-access-token:${minted[0]!.token}`);
    expect(badJwts).toEqual([]);
    expect(gh.violations()).toEqual([]);

    const log = await api.deployments.logs(id, { tail: 1000 });
    expect(log.logs).toContain('Cloning acme/private with a GitHub App installation token');
    expect(log.logs).not.toContain(minted[0]!.token);
    expect((await api.projects.get(project.id)).repositoryUrl).toBe(`${gh.url}/acme/private.git`);
    const row = await s.running.deps.db
      .selectFrom('projects')
      .select(['repository_url', 'repository_credentials'])
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ repository_url: `${gh.url}/acme/private.git`, repository_credentials: null });

    // A redeploy mints a new token: none is kept between clones.
    const again = await finished(api, (await api.deployments.create(project.id)).id);
    expect(again.status).toBe('live');
    expect(minted).toHaveLength(2);
    expect(minted[1]!.token).not.toBe(minted[0]!.token);
  });

  it('says to install the App when it is not installed on a repository that needs it', async () => {
    const { token, orgId } = await s.user();
    const api = s.client(token);
    const project = await api.projects.create({
      name: 'not-installed',
      repositoryUrl: `${gh.url}/acme/elsewhere.git`,
      organizationId: orgId,
    });
    const before = minted.length;
    const d = await finished(api, (await api.deployments.create(project.id)).id);
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toContain(`Could not read the repository ${gh.url}/acme/elsewhere.git`);
    expect(d.errorMessage).toContain(
      'If acme/elsewhere is private, install the Slipway GitHub App on it (or give the project credentials) and deploy again.',
    );
    expect(minted).toHaveLength(before);
    const log = await api.deployments.logs(d.id, { tail: 1000 });
    expect(log.logs).toContain('The Slipway GitHub App is not installed on acme/elsewhere');
  });
});

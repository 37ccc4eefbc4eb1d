import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createCipher } from '../../server/core/secrets.ts';
import { openCredentials } from '../../server/features/github/repository-credentials.ts';
import { openStore } from '../../server/platform/store/db.ts';
import { allMigrations } from '../../server/platform/store/migrations/index.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { databaseForTest, testDialect } from '../helpers/database.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.ts';
import { addMember } from '../helpers/members.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Every byte the service stored, as text: on SQLite the database file and its write-ahead log;
 * on PostgreSQL every text column of every table, read back through SQL.
 */
async function everythingStored(t: { deps: TestApp['deps']; dataDir: string }): Promise<string> {
  if (testDialect() === 'sqlite') {
    return readdirSync(t.dataDir)
      .filter((f) => f.startsWith('slipway.db'))
      .map((f) => readFileSync(join(t.dataDir, f)).toString('latin1'))
      .join('\n');
  }
  const tables = await t.deps.db.introspection.getTables();
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await t.deps.db
      .selectFrom(table.name as 'projects')
      .selectAll()
      .execute();
    parts.push(JSON.stringify(rows));
  }
  return parts.join('\n');
}

describe('secrets at rest', () => {
  let t: TestApp;
  let alice: TestUser;
  let viewer: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
  });
  afterAll(() => t?.close());

  it('keeps no fresh API token in the idempotency store, and still replays it to a client that lost it', async () => {
    const headers = { 'idempotency-key': 'create-ci-token' };
    const first = await t.call(alice, 'POST', '/v1/user/tokens', { name: 'ci' }, headers);
    expect(first.status).toBe(201);
    const token: string = first.body.data.token;
    expect(token).toMatch(/^slw_/);

    const replay = await t.call(alice, 'POST', '/v1/user/tokens', { name: 'ci' }, headers);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data.token).toBe(token);
    expect((await t.call(token, 'GET', '/v1/user')).status).toBe(200);

    const row = await t.deps.db
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('key', '=', 'create-ci-token')
      .executeTakeFirstOrThrow();
    expect(row.response_body).toMatch(/^v1\./);
    expect(row.response_body).not.toContain(token);
    const stored = await everythingStored(t);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice(4));
  });

  it('splits credentials off a repository URL, encrypts them, and shows them to nobody', async () => {
    const secret = 'ghp_0123456789abcdefghijklmnopqrstuvwxyz';
    const url = `https://x-access-token:${secret}@github.com/acme/private-app.git`;
    const created = await t.call(alice, 'POST', '/v1/projects', {
      name: 'private-app',
      repositoryUrl: url,
      organizationId: alice.orgId,
    });
    expect(created.status).toBe(201);
    expect(created.body.data.repositoryUrl).toBe('https://***@github.com/acme/private-app.git');
    const id: string = created.body.data.id;

    for (const who of [alice, viewer]) {
      const got = await t.call(who, 'GET', `/v1/projects/${id}`);
      expect(got.body.data.repositoryUrl).toBe('https://***@github.com/acme/private-app.git');
      const listed = await t.call(who, 'GET', `/v1/projects?org=${alice.orgId}`);
      expect(JSON.stringify(listed.body)).not.toContain(secret);
    }
    const row = await t.deps.db
      .selectFrom('projects')
      .select(['repository_url', 'repository_credentials'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.repository_url).toBe('https://github.com/acme/private-app.git');
    expect(openCredentials(t.deps.cipher, row.repository_credentials)).toBe(`x-access-token:${secret}`);
    expect(await everythingStored(t)).not.toContain(secret);
  });

  it('keeps stored credentials when a client sends the masked URL back, replaces or drops them on request', async () => {
    const created = await t.call(alice, 'POST', '/v1/projects', {
      name: 'rotate',
      repositoryUrl: 'https://oauth2:first-token@git.example.com/acme/rotate.git',
      organizationId: alice.orgId,
    });
    const id: string = created.body.data.id;
    const credentials = async () =>
      openCredentials(
        t.deps.cipher,
        (
          await t.deps.db
            .selectFrom('projects')
            .select('repository_credentials')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).repository_credentials,
      );

    const roundTrip = await t.call(alice, 'PATCH', `/v1/projects/${id}`, {
      repositoryUrl: created.body.data.repositoryUrl,
      branch: 'release',
    });
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.body.data).toMatchObject({
      repositoryUrl: 'https://***@git.example.com/acme/rotate.git',
      branch: 'release',
    });
    expect(await credentials()).toBe('oauth2:first-token');

    const rotated = await t.call(alice, 'PATCH', `/v1/projects/${id}`, {
      repositoryUrl: 'https://oauth2:second-token@git.example.com/acme/rotate.git',
    });
    expect(rotated.status).toBe(200);
    expect(await credentials()).toBe('oauth2:second-token');

    const viewerTry = await t.call(viewer, 'PATCH', `/v1/projects/${id}`, {
      repositoryUrl: 'https://git.example.com/acme/rotate.git',
    });
    expect(viewerTry.status).toBe(403);
    expect(await credentials()).toBe('oauth2:second-token');

    const dropped = await t.call(alice, 'PATCH', `/v1/projects/${id}`, {
      repositoryUrl: 'https://git.example.com/acme/rotate.git',
    });
    expect(dropped.body.data.repositoryUrl).toBe('https://git.example.com/acme/rotate.git');
    expect(await credentials()).toBeNull();

    // With nothing stored, *** stands for nothing: a clear 400 that changes nothing.
    const masked = await t.call(alice, 'PATCH', `/v1/projects/${id}`, {
      repositoryUrl: 'https://***@git.example.com/acme/other.git',
    });
    expect(masked.status).toBe(400);
    expect(masked.body.error.details).toEqual([
      { path: 'repositoryUrl', message: expect.stringContaining('*** stands for the credentials stored') },
    ]);
    const after = await t.call(alice, 'GET', `/v1/projects/${id}`);
    expect(after.body.data.repositoryUrl).toBe('https://git.example.com/acme/rotate.git');
    const createMasked = await t.call(alice, 'POST', '/v1/projects', {
      name: 'masked',
      repositoryUrl: 'https://***@git.example.com/acme/masked.git',
      organizationId: alice.orgId,
    });
    expect(createMasked.status).toBe(400);
  });

  it('leaves a bare ssh user name in the URL: it is not a secret', async () => {
    const created = await t.call(alice, 'POST', '/v1/projects', {
      name: 'over-ssh',
      repositoryUrl: 'ssh://git@git.example.com/acme/app.git',
      organizationId: alice.orgId,
    });
    expect(created.body.data.repositoryUrl).toBe('ssh://git@git.example.com/acme/app.git');
  });
});

describe('an upgrade from a version that kept secrets in plaintext', () => {
  it('moves repository credentials and stored answers out of plaintext, keeping them usable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'slipway-upgrade-'));
    const database = await databaseForTest(undefined, dataDir, false);
    // The key createTestApp configures.
    const cipher = createCipher(Buffer.alloc(32, 7));
    const store = openStore({ databaseUrl: database.env.DATABASE_URL, dataDir });
    const now = new Date().toISOString();
    try {
      const migrator = new Migrator({
        db: store.db,
        provider: { getMigrations: async () => allMigrations(store.dialect, cipher) },
      });
      const before = await migrator.migrateTo('005_certificates_and_runtime_samples');
      expect(before.error).toBeUndefined();
      await store.db
        .insertInto('users')
        .values({ id: 'usr_old', email: 'old@example.com', created_at: now })
        .execute();
      await store.db
        .insertInto('organizations')
        .values({
          id: 'org_old',
          name: 'old',
          display_name: 'old',
          plan: 'free',
          personal_user_id: 'usr_old',
          created_at: now,
          updated_at: now,
        })
        .execute();
      const project = {
        id: 'prj_old',
        organization_id: 'org_old',
        name: 'old-app',
        branch: 'main',
        framework: null,
        status: 'active' as const,
        production_host: 'old-app',
        production_deployment_id: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await store.db
        .insertInto('projects')
        .values([
          { ...project, repository_url: 'https://x-access-token:ghp_oldsecret1234@github.com/o/r.git' },
          {
            ...project,
            id: 'prj_plain',
            name: 'plain',
            production_host: 'plain',
            repository_url: 'https://github.com/o/p.git',
          },
        ] as never)
        .execute();
      await store.db
        .insertInto('idempotency_keys')
        .values({
          user_id: 'usr_old',
          key: 'k1',
          method: 'POST',
          path: '/v1/user/tokens',
          body_hash: 'h',
          state: 'done',
          status: 201,
          response_body: '{"success":true,"data":{"token":"slw_oldplaintexttoken"}}',
          response_headers: '{}',
          created_at: now,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        })
        .execute();
    } finally {
      await store.close();
    }

    const t = await createTestApp({ dataDir });
    try {
      const rows = await t.deps.db
        .selectFrom('projects')
        .select(['id', 'repository_url', 'repository_credentials'])
        .orderBy('id')
        .execute();
      expect(rows.map((r) => [r.id, r.repository_url])).toEqual([
        ['prj_old', 'https://github.com/o/r.git'],
        ['prj_plain', 'https://github.com/o/p.git'],
      ]);
      expect(openCredentials(t.deps.cipher, rows[0]!.repository_credentials)).toBe(
        'x-access-token:ghp_oldsecret1234',
      );
      expect(rows[1]!.repository_credentials).toBeNull();
      const answer = await t.deps.db
        .selectFrom('idempotency_keys')
        .select('response_body')
        .executeTakeFirstOrThrow();
      expect(t.deps.cipher.decrypt(answer.response_body!)).toContain('slw_oldplaintexttoken');
      const stored = await everythingStored(t);
      expect(stored).not.toContain('ghp_oldsecret1234');
      expect(stored).not.toContain('slw_oldplaintexttoken');
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * The clone still gets the credentials: a real git smart-HTTP server on 127.0.0.1 that wants
 * them, reached from inside the sandbox through SLIPWAY_SANDBOX_HOST_PORTS.
 */
describe('a build of a repository that needs credentials', () => {
  let s: Stack;
  let repo: GitRepo;
  let git: GitHttpServer;
  const password = 'ghs_installation0123456789abcdef';

  beforeAll(async () => {
    repo = createGitRepo({ files: { 'index.html': '<h1>private</h1>' } });
    git = await startGitHttpServer(repo.dir, { auth: (u, p) => u === 'x-access-token' && p === password });
    s = await startStack({ env: { SLIPWAY_SANDBOX_HOST_PORTS: new URL(git.url).port } });
  });
  afterAll(async () => {
    await s?.stop();
    await git?.stop();
    repo?.remove();
  });

  it('clones with the stored credentials, and neither the log nor the API shows them', async () => {
    const { token, orgId } = await s.user();
    const api = s.client(token);
    const project = await api.projects.create({
      name: 'needs-auth',
      repositoryUrl: git.url.replace('http://', `http://x-access-token:${password}@`),
      organizationId: orgId,
    });
    expect(project.repositoryUrl).toBe(git.url.replace('http://', 'http://***@'));
    const { id } = await api.deployments.create(project.id);
    const d = await waitFor(
      `deployment ${id} to finish`,
      async (): Promise<Deployment | null> => {
        const got = await api.deployments.get(id);
        return got.status === 'live' || got.status === 'failed' ? got : null;
      },
      30_000,
    );
    expect(d.errorMessage).toBeNull();
    expect(d.status).toBe('live');
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>private</h1>');
    expect(git.credentials).toContain(`x-access-token:${password}`);
    const log = await api.deployments.logs(id, { tail: 1000 });
    expect(log.logs).not.toContain(password);
    expect(log.logs).toContain('***@127.0.0.1');
  });
});

import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort, isAccepting } from '../../server/core/free-port.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';

/** The repository URL rules as the API applies them: what needs no DNS, answered as a 400. */
describe('project repository URLs', () => {
  let t: TestApp;
  let alice: TestUser;
  let repo: GitRepo;
  let listening: Server;
  let openPort: number;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    repo = createGitRepo({ files: { 'index.html': '<h1>hi</h1>' } });
    listening = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    openPort = (listening.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => listening?.close(resolve));
    await t?.close();
    repo?.remove();
  });

  const create = (name: string, repositoryUrl: string) =>
    t.call(alice, 'POST', '/v1/projects', { name, repositoryUrl, organizationId: alice.orgId });
  /** Names of the projects stored, read from the database itself. */
  const stored = async (names: string[]) =>
    (await t.deps.db.selectFrom('projects').select('name').where('name', 'in', names).execute()).map(
      (p) => p.name,
    );

  it('creates a project from a local repository outside the data directory (the quick start)', async () => {
    const res = await create('local', repo.url);
    expect(res.status).toBe(201);
    expect(res.body.data.repositoryUrl).toBe(repo.url);
    expect(await stored(['local'])).toEqual(['local']);
  });

  it('refuses a path in the data directory with a VALIDATION_ERROR on repositoryUrl, and creates nothing', async () => {
    for (const [name, url] of [
      ['workspaces', `file://${t.dataDir}/workspaces/dep_1/src`],
      ['database', `file://${t.dataDir}`],
      ['root', 'file:///'],
    ]) {
      const res = await create(name!, url!);
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details).toEqual([
        { path: 'repositoryUrl', message: expect.stringMatching(/data or artifacts directory/) },
      ]);
      expect(res.body.error.message).toMatch(/^Invalid request: repositoryUrl: /);
    }
    expect(await stored(['workspaces', 'database', 'root'])).toEqual([]);
  });

  it('answers a loopback address the same whether its port is open or closed', async () => {
    const closedPort = await findFreePort();
    expect(await isAccepting(openPort)).toBe(true);
    expect(await isAccepting(closedPort)).toBe(false);
    const open = await create('open', `git://127.0.0.1:${openPort}/web.git`);
    const closed = await create('closed', `git://127.0.0.1:${closedPort}/web.git`);
    expect(open.status).toBe(400);
    expect(closed.status).toBe(400);
    expect(open.body).toEqual(closed.body);
    expect(open.body.error.message).toBe(
      "Invalid request: repositoryUrl: 127.0.0.1 is not reachable from builds (loopback, private, link-local and the server's own addresses are refused; an operator can allow hosts with SLIPWAY_SANDBOX_ALLOW)",
    );
    expect(await stored(['open', 'closed'])).toEqual([]);
  });

  it('refuses before asking for payment on the paid API', async () => {
    const res = await t.call(alice, 'POST', '/api/v1/projects', {
      name: 'paid',
      repositoryUrl: `file://${t.dataDir}/workspaces`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/^Invalid request: repositoryUrl: .*data or artifacts directory/),
    });
    expect(await stored(['paid'])).toEqual([]);
  });

  it('follows the server settings: local repositories off, loopback allowed', async () => {
    const other = await createTestApp({
      env: { SLIPWAY_LOCAL_REPOSITORIES: 'off', SLIPWAY_SANDBOX_ALLOW: '127.0.0.1' },
    });
    try {
      const bob = await other.user('bob@example.com');
      const local = await other.call(bob, 'POST', '/v1/projects', {
        name: 'local',
        repositoryUrl: repo.url,
        organizationId: bob.orgId,
      });
      expect(local.status).toBe(400);
      expect(local.body.error.details[0].message).toMatch(/SLIPWAY_LOCAL_REPOSITORIES=off/);
      const loopback = await other.call(bob, 'POST', '/v1/projects', {
        name: 'loopback',
        repositoryUrl: `git://127.0.0.1:${openPort}/web.git`,
        organizationId: bob.orgId,
      });
      expect(loopback.status).toBe(201);
    } finally {
      await other.close();
    }
  });
});

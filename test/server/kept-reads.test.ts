import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

/**
 * On SQLite the project a request names, with the caller's role, is answered from memory until a
 * project or membership changes (server/platform/store/sqlite-changes.ts). These tests change both tables
 * every way the service and its operators can, and check that the very next request sees it.
 */
describe.skipIf(testDialect() !== 'sqlite')('reads kept until what they read changes (SQLite)', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let projectId: string;

  beforeAll(async () => {
    a = await createTestApp();
    // A second service on the same file, as `slipway` commands run beside `slipway serve`.
    b = await createTestApp({ dataDir: a.dataDir });
    owner = await a.user('owner@example.com');
    member = await a.user('member@example.com');
    const project = await a.call(owner, 'POST', '/v1/projects', {
      name: 'kept',
      repositoryUrl: 'https://example.com/kept.git',
      organizationId: owner.orgId,
    });
    expect(project.status).toBe(201);
    projectId = project.body.data.id;
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const nameSeen = async (user: TestUser = owner) => {
    const res = await a.call(user, 'GET', `/v1/projects/${projectId}`);
    return res.status === 200 ? (res.body.data.name as string) : res.status;
  };
  const rename = (db: { prepare(sql: string): { run(...p: unknown[]): unknown } }, name: string) =>
    db.prepare('update projects set name = ? where id = ?').run(name, projectId);

  it('sees a change this process makes, through the API or SQL on its own connection', async () => {
    expect(await nameSeen()).toBe('kept');
    const patched = await a.call(owner, 'PATCH', `/v1/projects/${projectId}`, { name: 'kept-2' });
    expect(patched.status).toBe(200);
    expect(await nameSeen()).toBe('kept-2');
    await a.deps.db.updateTable('projects').set({ name: 'kept-3' }).where('id', '=', projectId).execute();
    expect(await nameSeen()).toBe('kept-3');
  });

  it('answers from memory: with its change triggers dropped, a change on its connection is missed', async () => {
    expect(await nameSeen()).toBe('kept-3');
    // What keeps the answers exact is the connection's temporary triggers: without them the kept
    // answer outlives the change (so the answer did come from memory).
    const { rows: triggers } = await sql<{
      name: string;
    }>`select name from sqlite_temp_master where type = 'trigger'`.execute(a.deps.db);
    expect(triggers.length).toBe(6);
    for (const { name } of triggers) await sql`drop trigger ${sql.ref(`temp.${name}`)}`.execute(a.deps.db);
    await a.deps.db.updateTable('projects').set({ name: 'unseen' }).where('id', '=', projectId).execute();
    expect(await nameSeen()).toBe('kept-3');
    // Another connection's commit is seen (and the triggers are made again).
    const other = new SqliteDatabase(join(a.dataDir, 'slipway.db'));
    try {
      rename(other, 'from-elsewhere');
    } finally {
      other.close();
    }
    expect(await nameSeen()).toBe('from-elsewhere');
    await a.deps.db.updateTable('projects').set({ name: 'kept-4' }).where('id', '=', projectId).execute();
    expect(await nameSeen()).toBe('kept-4');
  });

  it("never answers one user's kept read to another: a stranger, with or without a guessed id, gets 404", async () => {
    const stranger = await a.user('stranger@example.com');
    // The owner's answer is kept; the stranger asks for the same project, often, and through
    // ids that differ only in case or by a trailing byte.
    expect(await nameSeen(owner)).toBe('kept-4');
    for (let i = 0; i < 3; i++) expect(await nameSeen(stranger)).toBe(404);
    for (const id of [projectId.toUpperCase(), `${projectId}\u0000`, `${projectId} `]) {
      const res = await a.call(stranger, 'GET', `/v1/projects/${encodeURIComponent(id)}`);
      expect([400, 404]).toContain(res.status);
    }
    expect(await nameSeen(owner)).toBe('kept-4');
  });

  it('takes access away on the next request when another process removes a member', async () => {
    const invited = await a.call(owner, 'POST', `/v1/organizations/${owner.orgId}/members/invite`, {
      email: member.email,
      role: 'viewer',
    });
    expect(invited.status).toBe(201);
    expect(await nameSeen(member)).toBe('kept-4');
    // Removed through the other process: this one hears of it through the database alone.
    const removed = await b.call(
      owner,
      'DELETE',
      `/v1/organizations/${owner.orgId}/members/${encodeURIComponent(member.email)}`,
    );
    expect(removed.status).toBe(200);
    expect(await nameSeen(member)).toBe(404);
    expect(await nameSeen(owner)).toBe('kept-4');
  });

  it('takes a deleted project away at once, and a project read inside a transaction waits for it', async () => {
    // A transaction open on the connection (as a service's would be) renames the project; a
    // request during it reads the committed row after it, never the row from before.
    let during: Promise<unknown> | undefined;
    await a.deps.db.transaction().execute(async (tx) => {
      await tx.updateTable('projects').set({ name: 'in-tx' }).where('id', '=', projectId).execute();
      during = nameSeen();
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(await during).toBe('in-tx');
    const deleted = await b.call(owner, 'DELETE', `/v1/projects/${projectId}`);
    expect(deleted.status).toBe(200);
    expect(await nameSeen()).toBe(404);
  });
});

describe.skipIf(testDialect() !== 'sqlite')('change triggers made outside transactions (SQLite)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('does not lose its triggers to a transaction that rolls back around the first read', async () => {
    const owner = await t.user('first@example.com');
    const created = await t.call(owner, 'POST', '/v1/projects', {
      name: 'first',
      repositoryUrl: 'https://example.com/first.git',
      organizationId: owner.orgId,
    });
    const projectId = created.body.data.id as string;
    const name = async () =>
      (await t.call(owner, 'GET', `/v1/projects/${projectId}`)).body.data.name as string;
    // The first kept read of this process happens while a transaction is open, which then
    // rolls back: triggers made inside it would go with it.
    let during: Promise<string> | undefined;
    await expect(
      t.deps.db.transaction().execute(async () => {
        during = name();
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await during).toBe('first');
    expect(await name()).toBe('first');
    await t.deps.db.updateTable('projects').set({ name: 'renamed' }).where('id', '=', projectId).execute();
    expect(await name()).toBe('renamed');
  });
});

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUploads } from '../../server/features/uploads/clean-uploads.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { testDialect } from '../helpers/database.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const KiB = 1024;
const HOUR = 3_600_000;
/** A file of `size` bytes unlike any other of the test. */
const blob = (seed: string, size: number) => {
  const b = Buffer.alloc(size, 0);
  b.write(seed);
  return b;
};

/** Every file in the upload store, names only: half-written (`.tmp`) ones included. */
async function storedNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (const sub of await readdir(dir).catch(() => [] as string[])) {
    for (const name of await readdir(join(dir, sub))) names.push(name);
  }
  return names.sort();
}

/**
 * The attack of issue 36: an organization uploads until its disk is full. Through the real HTTP
 * API of a running service, on the free plan with `storage=1MiB`.
 */
describe('storage quota of uploads, per organization and plan', () => {
  let s: Stack;
  const clock = new ManualClock();
  let mallory: { token: string; orgId: string };
  let bob: { token: string; orgId: string };
  let malloryProject: string;
  let bobProject: string;

  const onFree = async (u: { orgId: string }) => {
    await s.running.deps.db
      .updateTable('organizations')
      .set({ plan: 'free' })
      .where('id', '=', u.orgId)
      .execute();
  };
  const project = async (u: { token: string; orgId: string }, name: string) =>
    (
      await s.client(u.token).projects.create({
        name,
        repositoryUrl: 'https://example.invalid/never-cloned.git',
        organizationId: u.orgId,
      })
    ).id;
  /** PUT through HTTP; `chunked` sends no Content-Length, so the bytes are read before the check. */
  const put = (u: { token: string }, projectId: string, bytes: Buffer, chunked = false) =>
    fetch(`${s.apiUrl}/v1/projects/${projectId}/files/${sha(bytes)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/octet-stream' },
      body: chunked
        ? new ReadableStream({
            start(c) {
              c.enqueue(new Uint8Array(bytes));
              c.close();
            },
          })
        : new Uint8Array(bytes),
      ...(chunked ? { duplex: 'half' } : {}),
    });
  const missing = async (u: { token: string }, projectId: string, hashes: string[]) => {
    const res = await fetch(`${s.apiUrl}/v1/projects/${projectId}/files/missing`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: hashes }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { missing: string[] } }).data.missing;
  };
  const usage = async (orgId: string) =>
    Number(
      (
        await s.running.deps.db
          .selectFrom('organizations')
          .select('upload_bytes')
          .where('id', '=', orgId)
          .executeTakeFirstOrThrow()
      ).upload_bytes,
    );

  beforeAll(async () => {
    s = await startStack({ env: { SLIPWAY_FREE_LIMITS: 'storage=1MiB' }, roles: ['api'], clock });
    mallory = await s.user('mallory-quota@example.com');
    bob = await s.user('bob-quota@example.com');
    await onFree(mallory);
    await onFree(bob);
    malloryProject = await project(mallory, 'filler');
    bobProject = await project(bob, 'neighbour');
  });
  afterAll(() => s?.stop());

  it('refuses the upload past the quota with 413 QUOTA_EXCEEDED naming it, keeps nothing of it, and leaves other organizations alone', async () => {
    const dir = s.running.deps.config.uploads.dir;
    const fits = [0, 1, 2, 3].map((i) => blob(`fits-${i}`, 256 * KiB));
    for (const f of fits) expect((await put(mallory, malloryProject, f)).status).toBe(201);
    expect(await usage(mallory.orgId)).toBe(1024 * KiB);
    // Members see it, and the quota, through the API; other organizations do not.
    expect(await s.client(mallory.token).organizations.usage(mallory.orgId)).toEqual({
      plan: 'free',
      storage: { usedBytes: 1024 * KiB, limitBytes: 1024 * KiB },
      buildCaches: { usedBytes: 0, limitBytes: 2 * 1024 * 1024 * KiB },
    });
    await expect(s.client(bob.token).organizations.usage(mallory.orgId)).rejects.toMatchObject({
      status: 404,
    });
    // A file the organization keeps already costs nothing more.
    expect((await put(mallory, malloryProject, fits[0]!)).status).toBe(200);
    const before = await storedNames(dir);

    const over = blob('one too many', 1);
    for (const chunked of [false, true]) {
      const refused = await put(mallory, malloryProject, over, chunked);
      expect(refused.status).toBe(413);
      const body = (await refused.json()) as {
        success: boolean;
        error: { code: string; message: string; details: unknown };
      };
      expect(body.success).toBe(false);
      expect(body.error.code).toBe('QUOTA_EXCEEDED');
      expect(body.error.message).toMatch(
        /^Storage quota exceeded: organization \S+ keeps 1 MiB \(1048576 bytes\) of uploaded files and the free plan's storage quota is 1 MiB; this file of 1 bytes does not fit\. Uploads not used for 24 hours are removed \(SLIPWAY_UPLOAD_TTL\), the oldest of this organization's at 2026-11-23T10:00:00\.000Z; or move the organization to a plan with more storage \(pro: 10 GiB\)\.$/,
      );
      expect(body.error.details).toEqual({
        quota: 'storage',
        plan: 'free',
        usedBytes: 1024 * KiB,
        limitBytes: 1024 * KiB,
        fileBytes: 1,
      });
    }
    // Nothing of the refused requests: no bytes (not even half-written), no record, no charge.
    expect(await storedNames(dir)).toEqual(before);
    expect(existsSync(join(dir, sha(over).slice(0, 2), sha(over)))).toBe(false);
    expect(await missing(mallory, malloryProject, [sha(over)])).toEqual([sha(over)]);
    expect(await usage(mallory.orgId)).toBe(1024 * KiB);

    // Another organization on the same plan uploads as before, the same bytes included; that
    // it keeps them does not make them free for mallory, who is charged for what she keeps.
    expect((await put(bob, bobProject, over)).status).toBe(201);
    expect((await put(bob, bobProject, fits[1]!)).status).toBe(201);
    expect(await usage(bob.orgId)).toBe(256 * KiB + 1);
    expect((await put(mallory, malloryProject, over)).status).toBe(413);

    // A bigger plan is a way out.
    await s.running.deps.db
      .updateTable('organizations')
      .set({ plan: 'pro' })
      .where('id', '=', mallory.orgId)
      .execute();
    expect((await put(mallory, malloryProject, over)).status).toBe(201);
    await onFree(mallory);
    expect((await put(mallory, malloryProject, blob('still too many', 1))).status).toBe(413);
  });

  it('takes uploads again once the old ones expire (SLIPWAY_UPLOAD_TTL)', async () => {
    clock.advance(24 * HOUR);
    expect(await cleanUploads(s.running.deps)).toBeGreaterThanOrEqual(5);
    expect(await usage(mallory.orgId)).toBe(0);
    expect(await usage(bob.orgId)).toBe(0);
    const again = blob('after expiry', 512 * KiB);
    expect((await put(mallory, malloryProject, again)).status).toBe(201);
    expect(await usage(mallory.orgId)).toBe(512 * KiB);
    expect(await missing(mallory, malloryProject, [sha(again)])).toEqual([]);
  });
});

describe(`storage quota under concurrent uploads (${testDialect()})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { SLIPWAY_FREE_LIMITS: 'storage=1MiB' } });
  });
  afterAll(() => t.close());

  it('accepts exactly what fits of 24 uploads at once: 10 of 100 KiB, never 11', async () => {
    const user = await t.user('racer-quota@example.com');
    const created = await t.call(user, 'POST', '/v1/projects', {
      name: 'racer',
      repositoryUrl: 'https://example.com/r.git',
      organizationId: user.orgId,
    });
    expect(created.status).toBe(201);
    const files = Array.from({ length: 24 }, (_, i) => blob(`race-${i}`, 100 * KiB));
    const answers = await Promise.all(
      files.map((f) =>
        t.app.inject({
          method: 'PUT',
          url: `/v1/projects/${created.body.data.id}/files/${sha(f)}`,
          headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
          payload: f,
        }),
      ),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((x) => x === 201)).toHaveLength(10);
    expect(statuses.filter((x) => x === 413)).toHaveLength(14);
    const rows = await t.deps.db
      .selectFrom('uploaded_files')
      .select(['sha256', 'size'])
      .where('organization_id', '=', user.orgId)
      .execute();
    expect(rows).toHaveLength(10);
    const org = await t.deps.db
      .selectFrom('organizations')
      .select('upload_bytes')
      .where('id', '=', user.orgId)
      .executeTakeFirstOrThrow();
    expect(Number(org.upload_bytes)).toBe(1000 * KiB);
    // The bytes kept are those of the accepted uploads, and nothing else.
    const accepted = files.filter((_, i) => statuses[i] === 201).map(sha);
    expect(rows.map((r) => r.sha256).sort()).toEqual(accepted.sort());
    expect((await storedNames(t.deps.config.uploads.dir)).sort()).toEqual(accepted.sort());
  });
});

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { ApiError } from '../../api/errors.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * A prebuilt deployment is stored by its list, and the blobs behind it are shared by every
 * tenant: a blob another organization's deployment stored is reused without being read. The
 * attack: an organization that knows only the hash of another's file (no bytes) names it in its
 * own prebuilt deployment, hoping the shared blob serves it. It must be refused before any
 * build, and the ordinary prebuilt path must still work.
 */
describe('a prebuilt deployment naming content its organization never uploaded', () => {
  let s: Stack;
  let alice: ReturnType<Stack['client']>;
  let mallory: ReturnType<Stack['client']>;
  let aliceProject: string;
  let malloryProject: string;
  const secret = '<h1>alice’s unreleased page</h1>';

  async function live(api: ReturnType<Stack['client']>, id: string): Promise<Deployment> {
    return waitFor(
      `deployment ${id} to finish`,
      async () => {
        const d = await api.deployments.get(id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      60_000,
    );
  }

  async function refusal(attempt: Promise<unknown>): Promise<ApiError> {
    const err = await attempt.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }

  beforeAll(async () => {
    s = await startStack();
    const a = await s.user('alice-prebuilt@example.com');
    const m = await s.user('mallory-prebuilt@example.com');
    alice = s.client(a.token);
    mallory = s.client(m.token);
    const repositoryUrl = 'https://example.invalid/never-cloned.git';
    aliceProject = (
      await alice.projects.create({ name: 'alice-site', repositoryUrl, organizationId: a.orgId })
    ).id;
    malloryProject = (
      await mallory.projects.create({ name: 'mallory-site', repositoryUrl, organizationId: m.orgId })
    ).id;
    // Alice's file is in the shared blobs once her prebuilt deployment is live.
    await alice.uploads.upload(aliceProject, sha(secret), Buffer.from(secret));
    const d = await alice.deployments.create(aliceProject, {
      prebuilt: true,
      files: [{ path: 'index.html', sha256: sha(secret), size: Buffer.byteLength(secret), mode: 0o644 }],
    });
    expect((await live(alice, d.id)).status).toBe('live');
  }, 120_000);
  afterAll(() => s?.stop());

  it('is refused before any build, naming the file; what other organizations hold is never said', async () => {
    const before = (await mallory.deployments.list(malloryProject)).data.length;
    // Asking which files are missing says nothing of Alice's: her hash is missing for Mallory.
    expect((await mallory.uploads.missing(malloryProject, [sha(secret)])).missing).toEqual([sha(secret)]);
    const err = await refusal(
      mallory.deployments.create(malloryProject, {
        prebuilt: true,
        files: [{ path: 'stolen.html', sha256: sha(secret), size: Buffer.byteLength(secret), mode: 0o644 }],
      }),
    );
    expect(err.status).toBe(400);
    expect(err.details).toEqual([
      expect.objectContaining({
        path: 'files.0.sha256',
        message: expect.stringMatching(/was not uploaded: PUT the bytes of stolen\.html first/),
      }),
    ]);
    // A path that climbs out, beside a file of her own, is refused too.
    const own = '<h1>mallory</h1>';
    await mallory.uploads.upload(malloryProject, sha(own), Buffer.from(own));
    const climbing = await refusal(
      mallory.deployments.create(malloryProject, {
        prebuilt: true,
        files: [{ path: '../alice/index.html', sha256: sha(own), size: own.length, mode: 0o644 }],
      }),
    );
    expect(climbing.status).toBe(400);
    expect((await mallory.deployments.list(malloryProject)).data.length).toBe(before);

    // The ordinary path: her own prebuilt deployment goes live and serves her file only.
    const d = await mallory.deployments.create(malloryProject, {
      prebuilt: true,
      files: [{ path: 'index.html', sha256: sha(own), size: own.length, mode: 0o644 }],
    });
    const done = await live(mallory, d.id);
    expect(done.status).toBe('live');
    expect(await (await s.fetchFromEdge(done.url)).text()).toBe(own);
    expect((await s.fetchFromEdge(new URL('/stolen.html', done.url).href)).status).toBe(404);
  });
});

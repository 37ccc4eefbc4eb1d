import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUploads } from '../../server/features/uploads/clean-uploads.ts';
import { decodeBuildSpec } from '../../server/platform/store/build-spec.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { hashKey } from '../../server/platform/storage/blob-store.ts';
import { blobStoreOf } from '../../server/platform/storage/open-blob-store.ts';
import { addMember } from '../helpers/members.ts';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const HOUR = 3_600_000;

let s3: S3Server | undefined;
beforeAll(async () => {
  if (!s3ServerMissing) s3 = await startS3Server();
});
afterAll(() => s3?.stop());

/** The same suite with the files in the artifacts directory and in object storage (s3rver). */
describe.each([
  ['the artifacts directory', ''],
  ['object storage', s3ServerMissing],
])('uploads: files by content, kept in %s%s', (where, skip) => {
  if (skip) {
    it.skip('needs s3rver', () => {});
    return;
  }
  let t: TestApp;
  let alice: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  let pid: string;
  let malloryPid: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: {
        SLIPWAY_MAX_UPLOAD_SIZE: '64KiB',
        SLIPWAY_MAX_UPLOAD_FILES: '5',
        ...(where === 'object storage' ? s3!.env(`uploads-${Date.now()}`) : {}),
      },
    });
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
    const project = async (u: TestUser, name: string) => {
      const res = await t.call(u, 'POST', '/v1/projects', {
        name,
        repositoryUrl: 'https://example.com/repo.git',
        organizationId: u.orgId,
      });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    pid = await project(alice, 'site');
    malloryPid = await project(mallory, 'other');
  });
  afterAll(() => t.close());

  const put = (
    user: TestUser,
    project: string,
    hash: string,
    bytes: Buffer | string,
    type = 'application/octet-stream',
  ) =>
    t.app.inject({
      method: 'PUT',
      url: `/v1/projects/${project}/files/${hash}`,
      headers: { authorization: `Bearer ${user.token}`, 'content-type': type },
      payload: bytes,
    });
  const missing = async (user: TestUser, project: string, hashes: string[]) => {
    const res = await t.call(user, 'POST', `/v1/projects/${project}/files/missing`, { sha256: hashes });
    expect(res.status).toBe(200);
    return res.body.data.missing as string[];
  };
  /** The stored bytes of an uploaded file, or null, wherever the store keeps them. */
  const stored = async (hash: string) =>
    (await blobStoreOf(t.deps.config).read(hashKey('uploads', hash)))?.toString() ?? null;
  const deploymentCount = async () =>
    Number(
      (
        await t.deps.db
          .selectFrom('deployments')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('answers which files are missing, stores each once, and per organization', async () => {
    const index = '<h1>uploaded</h1>';
    const app = 'console.log("hi")';
    expect(await missing(alice, pid, [sha(index), sha(app), sha(index)])).toEqual([sha(index), sha(app)]);

    const first = await put(alice, pid, sha(index), index);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({ success: true, data: { sha256: sha(index), size: index.length } });
    expect(await stored(sha(index))).toBe(index);
    const again = await put(alice, pid, sha(index), index);
    expect(again.statusCode).toBe(200);
    expect(await missing(alice, pid, [sha(index), sha(app)])).toEqual([sha(app)]);

    // Another organization does not learn what alice uploaded, and must send the bytes itself.
    expect(await missing(mallory, malloryPid, [sha(index)])).toEqual([sha(index)]);
    expect((await put(mallory, malloryPid, sha(index), index)).statusCode).toBe(201);
    expect(await missing(mallory, malloryPid, [sha(index)])).toEqual([]);
  });

  it('refuses bytes that do not match their hash, or are too large, and keeps nothing', async () => {
    const claimed = sha('what I say');
    const wrong = await put(alice, pid, claimed, 'what I send');
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [
        { path: 'sha256', message: `does not match the bytes sent, which hash to ${sha('what I send')}` },
      ],
    });
    expect(await stored(claimed)).toBeNull();
    expect(await missing(alice, pid, [claimed])).toEqual([claimed]);

    // The organization holds this hash already: wrong bytes under its name are still refused.
    const held = '<p>held</p>';
    expect((await put(alice, pid, sha(held), held)).statusCode).toBe(201);
    const wrongHeld = await put(alice, pid, sha(held), 'not the held file');
    expect(wrongHeld.statusCode).toBe(400);
    expect(wrongHeld.json().error.details).toEqual([
      { path: 'sha256', message: `does not match the bytes sent, which hash to ${sha('not the held file')}` },
    ]);
    expect(await stored(sha(held))).toBe(held);
    expect((await put(alice, pid, sha(held), held)).statusCode).toBe(200);

    const big = Buffer.alloc(64 * 1024 + 1, 1);
    const tooBig = await put(alice, pid, sha(big), big);
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.json().error.details).toEqual([
      { path: 'body', message: `is larger than the limit of ${64 * 1024} bytes for one file` },
    ]);
    expect(await stored(sha(big))).toBeNull();

    const json = await put(alice, pid, sha('{}'), '{}', 'application/json');
    expect(json.statusCode).toBe(400);
    expect(json.json().error.details[0]).toMatchObject({ path: 'body' });
    const badHash = await put(alice, pid, 'ABC', 'x');
    expect(badHash.statusCode).toBe(400);
    expect(badHash.json().error.details[0]).toMatchObject({ path: 'sha256' });
  });

  it('needs a developer to upload or ask, and membership to see the project', async () => {
    expect((await put(viewer, pid, sha('v'), 'v')).statusCode).toBe(403);
    expect(
      (await t.call(viewer, 'POST', `/v1/projects/${pid}/files/missing`, { sha256: [sha('v')] })).status,
    ).toBe(403);
    expect((await put(mallory, pid, sha('m'), 'm')).statusCode).toBe(404);
    const anonymous = await t.app.inject({
      method: 'PUT',
      url: `/v1/projects/${pid}/files/${sha('a')}`,
      headers: { 'content-type': 'application/octet-stream' },
      payload: 'a',
    });
    expect(anonymous.statusCode, anonymous.body).toBe(401);
  });

  it('creates a deployment from uploaded files, refusing bad lists with the field named', async () => {
    const files = { 'index.html': '<h1>ok</h1>', 'run.sh': '#!/bin/sh\necho hi\n' };
    for (const text of Object.values(files))
      expect((await put(alice, pid, sha(text), text)).statusCode).toBe(201);
    const entry = (path: string, text: string, extra: object = {}) => ({
      path,
      sha256: sha(text),
      size: text.length,
      ...extra,
    });
    const ok = [
      entry('index.html', files['index.html']),
      entry('bin/run.sh', files['run.sh'], { mode: 0o100755 }),
    ];

    const before = await deploymentCount();
    const bad: [unknown, string, RegExp][] = [
      [[entry('../x.html', 'a')], 'files.0.path', /must not contain "\.", "\.\." or empty segments/],
      [[entry('/abs.html', 'a')], 'files.0.path', /must be relative/],
      [[entry('a//b.html', 'a')], 'files.0.path', /empty segments/],
      [[entry('a\\b.html', 'a')], 'files.0.path', /backslashes/],
      [[ok[0], ok[0]], 'files.1.path', /repeats the path of files\.0/],
      [
        [entry('a', files['index.html']), entry('a/b', files['index.html'])],
        'files.1.path',
        /is inside files\.0, which is a file/,
      ],
      [[entry('link', files['index.html'], { mode: 0o120777 })], 'files.0.mode', /regular file/],
      [
        [entry('x.html', 'never uploaded')],
        'files.0.sha256',
        /was not uploaded: PUT the bytes of x\.html first/,
      ],
      [[{ ...ok[0], size: 3 }], 'files.0.size', /is 3, but the uploaded file is 11 bytes/],
      [
        Array.from({ length: 6 }, (_, i) => entry(`p${i}.html`, files['index.html'])),
        'files',
        /more than the limit of 5 \(SLIPWAY_MAX_UPLOAD_FILES\)/,
      ],
      [[{ ...ok[0], size: 70_000 }], 'files', /more than the limit of 65536 \(SLIPWAY_MAX_UPLOAD_SIZE\)/],
      [[], 'files', /at least one file/],
    ];
    for (const [list, path, message] of bad) {
      const res = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, { files: list });
      expect(res.status, path).toBe(400);
      const detail = (res.body.error.details as { path: string; message: string }[]).find(
        (d) => d.path === path,
      );
      expect(detail?.message, JSON.stringify(res.body.error.details)).toMatch(message);
    }
    const noFiles = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, { prebuilt: true });
    expect(noFiles.status).toBe(400);
    expect(noFiles.body.error.details).toEqual([
      { path: 'prebuilt', message: 'needs files: a prebuilt deployment is made of uploaded files' },
    ]);
    expect(await deploymentCount()).toBe(before);

    const viewerTry = await t.call(viewer, 'POST', `/v1/projects/${pid}/deployments`, { files: ok });
    expect(viewerTry.status).toBe(403);

    const created = await t.call(
      alice,
      'POST',
      `/v1/projects/${pid}/deployments`,
      {
        files: ok,
        commitHash: 'ABCDEF1',
      },
      { 'idempotency-key': 'upload-1' },
    );
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ source: 'upload', status: 'queued', commitHash: 'abcdef1' });
    const replay = await t.call(
      alice,
      'POST',
      `/v1/projects/${pid}/deployments`,
      { files: ok, commitHash: 'ABCDEF1' },
      {
        'idempotency-key': 'upload-1',
      },
    );
    expect(replay.body.data.id).toBe(created.body.data.id);
    const row = await t.deps.db
      .selectFrom('deployments')
      .select(['id', 'source', 'build_spec'])
      .where('id', '=', created.body.data.id)
      .executeTakeFirstOrThrow();
    expect(row.source).toBe('upload');
    const spec = decodeBuildSpec(row.id, row.build_spec);
    expect(spec.source.kind === 'upload' && spec.source.files).toEqual([
      { path: 'index.html', sha256: sha(files['index.html']), size: 11, mode: 0o644 },
      { path: 'bin/run.sh', sha256: sha(files['run.sh']), size: files['run.sh'].length, mode: 0o755 },
    ]);

    const prebuilt = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, {
      files: [ok[0]],
      prebuilt: true,
    });
    expect(prebuilt.status).toBe(201);
    expect(prebuilt.body.data.source).toBe('prebuilt');
    // Mallory's organization has not uploaded these: her own project cannot list them.
    const foreign = await t.call(mallory, 'POST', `/v1/projects/${malloryPid}/deployments`, {
      files: [ok[1]],
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details[0].path).toBe('files.0.sha256');
  });

  it('forgets uploads unused for SLIPWAY_UPLOAD_TTL, but not those a queued deployment lists', async () => {
    const kept = 'listed by a queued deployment';
    const dropped = 'used by nobody';
    const shared = 'uploaded by two organizations';
    for (const text of [kept, dropped, shared])
      expect((await put(alice, pid, sha(text), text)).statusCode).toBe(201);
    expect((await put(mallory, malloryPid, sha(shared), shared)).statusCode).toBe(201);
    const d = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, {
      files: [{ path: 'kept.txt', sha256: sha(kept), size: kept.length }],
    });
    expect(d.status).toBe(201);
    expect(t.deps.config.uploads.ttlMs).toBe(24 * HOUR);

    clock.advance(24 * HOUR - 1);
    await cleanUploads(t.deps);
    expect(await stored(sha(dropped))).not.toBeNull();
    // Asking about a file counts as using it.
    expect(await missing(mallory, malloryPid, [sha(shared)])).toEqual([]);
    clock.advance(1);
    expect(await cleanUploads(t.deps)).toBeGreaterThanOrEqual(2);
    expect(await stored(sha(dropped))).toBeNull();
    expect(await missing(alice, pid, [sha(dropped), sha(shared)])).toEqual([sha(dropped), sha(shared)]);
    expect(await stored(sha(kept))).not.toBeNull();
    // Mallory still has the shared file, so its bytes stay.
    expect(await stored(sha(shared))).not.toBeNull();
    expect(await missing(mallory, malloryPid, [sha(shared)])).toEqual([]);
  });
});

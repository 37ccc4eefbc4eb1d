import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveBuildEnv } from '../../server/features/deployments/env/resolve-build-env.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { addMember } from '../helpers/members.ts';

describe('environment variables', () => {
  let t: TestApp;
  let alice: TestUser;
  let dev: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    dev = await t.user('dev@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    await addMember(t, alice.orgId, dev, 'developer');
    await addMember(t, alice.orgId, viewer, 'viewer');
  });
  afterAll(() => t.close());

  let projectCount = 0;
  const newProject = async (owner: TestUser = alice) => {
    const res = await t.call(owner, 'POST', '/v1/projects', {
      name: `env-${++projectCount}`,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: owner.orgId,
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const env = (pid: string, rest = '') => `/v1/projects/${pid}/env${rest}`;
  const paths = (res: { body: any }) => res.body.error.details.map((d: { path: string }) => d.path).sort();
  const rowsOf = (pid: string) =>
    t.deps.db.selectFrom('env_vars').selectAll().where('project_id', '=', pid).orderBy('key').execute();

  it('creates a variable (201), encrypted at rest, with defaults', async () => {
    const pid = await newProject();
    const res = await t.call(dev, 'POST', env(pid), { key: 'API_URL', value: 'https://api.example.com' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        key: 'API_URL',
        value: 'https://api.example.com',
        encrypted: false,
        environment: 'production',
        createdAt: '2026-11-22T10:00:00.000Z',
        updatedAt: '2026-11-22T10:00:00.000Z',
      },
    });
    const [row] = await rowsOf(pid);
    expect(row!.value_ciphertext).toMatch(/^v1\./);
    expect(row!.value_ciphertext).not.toContain('api.example.com');
    expect(t.deps.cipher.decrypt(row!.value_ciphertext)).toBe('https://api.example.com');
  });

  it('masks secrets in every read, but keeps their plaintext for export', async () => {
    const pid = await newProject();
    const created = await t.call(alice, 'POST', env(pid), {
      key: 'DB_PASSWORD',
      value: 's3cr3t!',
      encrypted: true,
      environment: 'preview',
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ key: 'DB_PASSWORD', value: null, encrypted: true });
    for (const who of [alice, dev, viewer]) {
      const list = await t.call(who, 'GET', env(pid));
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([expect.objectContaining({ key: 'DB_PASSWORD', value: null })]);
      expect(list.text).not.toContain('s3cr3t');
    }
    const patched = await t.call(alice, 'PATCH', env(pid, '/DB_PASSWORD'), { value: 'n3w' });
    expect(patched.body.data.value).toBeNull();
    const exported = await t.call(dev, 'GET', env(pid, '/export?format=json&environment=preview'));
    expect(exported.body.data).toEqual({ DB_PASSWORD: 'n3w' });
  });

  it('rejects a duplicate (key, environment) with CONFLICT, but allows the key in another environment', async () => {
    const pid = await newProject();
    expect((await t.call(alice, 'POST', env(pid), { key: 'A', value: '1' })).status).toBe(201);
    const dup = await t.call(alice, 'POST', env(pid), { key: 'A', value: '2', environment: 'production' });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONFLICT');
    expect(dup.body.error.message).toContain('A already exists in production');
    const other = await t.call(alice, 'POST', env(pid), { key: 'A', value: '3', environment: 'development' });
    expect(other.status).toBe(201);
    expect(other.body.data.environment).toBe('development');
  });

  it('names each bad field: key pattern, 64 KiB value, environment, unknown fields', async () => {
    const pid = await newProject();
    const bad = await t.call(alice, 'POST', env(pid), {
      key: '1-BAD',
      value: 'x'.repeat(65_537),
      environment: 'staging',
      extra: true,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(paths(bad)).toEqual(['environment', 'extra', 'key', 'value']);
    const details = bad.body.error.details as { path: string; message: string }[];
    expect(details.find((d) => d.path === 'key')!.message).toContain('^[A-Za-z_][A-Za-z0-9_]*$');
    expect(details.find((d) => d.path === 'value')!.message).toContain('64 KiB');

    // 64 KiB is counted in UTF-8 bytes: 32768 two-byte characters fit, one more does not.
    expect((await t.call(alice, 'POST', env(pid), { key: 'BIG', value: 'é'.repeat(32_768) })).status).toBe(
      201,
    );
    const over = await t.call(alice, 'POST', env(pid), { key: 'BIG2', value: 'é'.repeat(32_769) });
    expect(over.status).toBe(400);
    expect(paths(over)).toEqual(['value']);
    const long = await t.call(alice, 'POST', env(pid), { key: 'K'.repeat(257), value: '' });
    expect(paths(long)).toEqual(['key']);
    const missing = await t.call(alice, 'POST', env(pid), {});
    expect(paths(missing)).toEqual(['key', 'value']);
    expect(await rowsOf(pid)).toHaveLength(1);
  });

  it('needs a token (401)', async () => {
    const pid = await newProject();
    for (const [method, url] of [
      ['GET', env(pid)],
      ['POST', env(pid)],
      ['PATCH', env(pid, '/A')],
      ['DELETE', env(pid, '/A')],
      ['POST', env(pid, '/import')],
      ['GET', env(pid, '/export')],
    ] as const) {
      const res = await t.call(null, method, url, method === 'GET' || method === 'DELETE' ? undefined : {});
      expect(res.status, `${method} ${url}`).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('lets a viewer read but not write or export (403)', async () => {
    const pid = await newProject();
    await t.call(alice, 'POST', env(pid), { key: 'A', value: '1' });
    expect((await t.call(viewer, 'GET', env(pid))).body.data).toHaveLength(1);
    const attempts = [
      t.call(viewer, 'POST', env(pid), { key: 'B', value: '2' }),
      t.call(viewer, 'PATCH', env(pid, '/A'), { value: '9' }),
      t.call(viewer, 'DELETE', env(pid, '/A')),
      t.call(viewer, 'POST', env(pid, '/import'), { variables: [{ key: 'C', value: '3' }] }),
      t.call(viewer, 'GET', env(pid, '/export')),
      t.call(viewer, 'GET', env(pid, '/export?format=json')),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    const rows = await rowsOf(pid);
    expect(rows.map((r) => [r.key, t.deps.cipher.decrypt(r.value_ciphertext)])).toEqual([['A', '1']]);
  });

  it("answers NOT_FOUND for another organization's project and for unknown keys", async () => {
    const pid = await newProject();
    await t.call(alice, 'POST', env(pid), { key: 'A', value: '1' });
    for (const res of [
      await t.call(mallory, 'GET', env(pid)),
      await t.call(mallory, 'POST', env(pid), { key: 'B', value: '2' }),
      await t.call(mallory, 'PATCH', env(pid, '/A'), { value: 'x' }),
      await t.call(mallory, 'DELETE', env(pid, '/A')),
      await t.call(mallory, 'POST', env(pid, '/import'), { variables: [] }),
      await t.call(mallory, 'GET', env(pid, '/export')),
      await t.call(alice, 'PATCH', env(pid, '/NOPE'), { value: 'x' }),
      await t.call(alice, 'DELETE', env(pid, '/NOPE')),
      await t.call(alice, 'DELETE', env(pid, '/A?environment=preview')),
      await t.call(alice, 'GET', env('prj_doesnotexist00000000')),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('paginates newest first with meta and filters by environment', async () => {
    const pid = await newProject();
    for (const [key, environment] of [
      ['ONE', 'production'],
      ['TWO', 'preview'],
      ['THREE', 'production'],
    ] as const) {
      clock.advance(1000);
      await t.call(alice, 'POST', env(pid), { key, value: key.toLowerCase(), environment });
    }
    const page1 = await t.call(viewer, 'GET', env(pid, '?limit=2'));
    expect(page1.body.meta).toEqual({ page: 1, limit: 2, total: 3, next: expect.any(String) });
    expect(page1.body.data.map((v: { key: string }) => v.key)).toEqual(['THREE', 'TWO']);
    const page2 = await t.call(viewer, 'GET', env(pid, '?limit=2&page=2'));
    expect(page2.body.data.map((v: { key: string; value: string }) => [v.key, v.value])).toEqual([
      ['ONE', 'one'],
    ]);
    const prod = await t.call(viewer, 'GET', env(pid, '?environment=production'));
    expect(prod.body.meta.total).toBe(2);
    expect(prod.body.data.map((v: { key: string }) => v.key)).toEqual(['THREE', 'ONE']);
    for (const q of ['environment=staging', 'limit=0', 'limit=101', 'page=0', 'foo=1']) {
      const res = await t.call(viewer, 'GET', env(pid, `?${q}`));
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('updates by key, asking for the environment when the key is in several', async () => {
    const pid = await newProject();
    await t.call(alice, 'POST', env(pid), { key: 'SOLO', value: 'a' });
    await t.call(alice, 'POST', env(pid), { key: 'MULTI', value: 'p', environment: 'production' });
    await t.call(alice, 'POST', env(pid), { key: 'MULTI', value: 'v', environment: 'preview' });
    clock.advance(60_000);

    const solo = await t.call(dev, 'PATCH', env(pid, '/SOLO'), { value: 'b' });
    expect(solo.status).toBe(200);
    expect(solo.body.data).toMatchObject({ key: 'SOLO', value: 'b', environment: 'production' });
    expect(solo.body.data.updatedAt).toBe(clock.now().toISOString());
    expect(solo.body.data.createdAt).not.toBe(solo.body.data.updatedAt);

    const ambiguous = await t.call(dev, 'PATCH', env(pid, '/MULTI'), { value: 'x' });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.details).toEqual([
      {
        path: 'environment',
        message: 'is required: MULTI exists in preview, production; add ?environment= to choose one',
      },
    ]);
    const chosen = await t.call(dev, 'PATCH', env(pid, '/MULTI?environment=preview'), {
      value: 'v2',
      encrypted: true,
    });
    expect(chosen.body.data).toMatchObject({ environment: 'preview', value: null, encrypted: true });
    const json = await t.call(dev, 'GET', env(pid, '/export?format=json&environment=preview'));
    expect(json.body.data).toEqual({ MULTI: 'v2' });
    const prod = await t.call(dev, 'GET', env(pid, '/export?format=json'));
    expect(prod.body.data).toEqual({ MULTI: 'p', SOLO: 'b' });

    // Unmarking a secret makes it readable again.
    const unmasked = await t.call(dev, 'PATCH', env(pid, '/MULTI?environment=preview'), { encrypted: false });
    expect(unmasked.body.data.value).toBe('v2');

    const empty = await t.call(dev, 'PATCH', env(pid, '/SOLO'), {});
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain('must change value or encrypted');
    const unknown = await t.call(dev, 'PATCH', env(pid, '/SOLO'), { value: 'c', key: 'OTHER' });
    expect(paths(unknown)).toEqual(['key']);
    const badEnv = await t.call(dev, 'PATCH', env(pid, '/SOLO?environment=prod'), { value: 'c' });
    expect(paths(badEnv)).toEqual(['environment']);
  });

  it('deletes by key, asking for the environment when the key is in several', async () => {
    const pid = await newProject();
    await t.call(alice, 'POST', env(pid), { key: 'SOLO', value: 'a', environment: 'development' });
    await t.call(alice, 'POST', env(pid), { key: 'MULTI', value: 'p' });
    await t.call(alice, 'POST', env(pid), { key: 'MULTI', value: 'd', environment: 'development' });

    const solo = await t.call(dev, 'DELETE', env(pid, '/SOLO'));
    expect(solo.status).toBe(200);
    expect(solo.body).toEqual({ success: true, message: 'Environment variable SOLO (development) deleted' });
    const ambiguous = await t.call(dev, 'DELETE', env(pid, '/MULTI'));
    expect(ambiguous.status).toBe(400);
    expect(paths(ambiguous)).toEqual(['environment']);
    const chosen = await t.call(dev, 'DELETE', env(pid, '/MULTI?environment=production'));
    expect(chosen.body.message).toBe('Environment variable MULTI (production) deleted');
    const rows = await rowsOf(pid);
    expect(rows.map((r) => [r.key, r.environment])).toEqual([['MULTI', 'development']]);
    expect((await t.call(dev, 'DELETE', env(pid, '/SOLO'))).status).toBe(404);
  });

  describe('import', () => {
    it('creates, updates with overwrite and skips without, keeping a secret a secret', async () => {
      const pid = await newProject();
      await t.call(alice, 'POST', env(pid), { key: 'KEEP', value: 'old' });
      await t.call(alice, 'POST', env(pid), { key: 'SECRET', value: 'old', encrypted: true });
      await t.call(alice, 'POST', env(pid), { key: 'KEEP', value: 'dev-only', environment: 'development' });

      const skip = await t.call(dev, 'POST', env(pid, '/import'), {
        variables: [
          { key: 'KEEP', value: 'new' },
          { key: 'FRESH', value: 'f', encrypted: true },
        ],
      });
      expect(skip.status).toBe(200);
      expect(skip.body).toEqual({ success: true, data: { created: 1, updated: 0, skipped: 1 } });

      const over = await t.call(dev, 'POST', env(pid, '/import'), {
        overwrite: true,
        variables: [
          { key: 'KEEP', value: 'new' },
          { key: 'SECRET', value: 'rotated' },
          { key: 'LAST', value: 'l' },
        ],
      });
      expect(over.body.data).toEqual({ created: 1, updated: 2, skipped: 0 });

      const prod = await t.call(dev, 'GET', env(pid, '/export?format=json'));
      expect(prod.body.data).toEqual({ FRESH: 'f', KEEP: 'new', LAST: 'l', SECRET: 'rotated' });
      const list = await t.call(viewer, 'GET', env(pid, '?environment=production&limit=100'));
      const masked = Object.fromEntries(
        list.body.data.map((v: { key: string; value: string | null }) => [v.key, v.value]),
      );
      expect(masked).toEqual({ FRESH: null, KEEP: 'new', LAST: 'l', SECRET: null });
      const devEnv = await t.call(dev, 'GET', env(pid, '/export?format=json&environment=development'));
      expect(devEnv.body.data).toEqual({ KEEP: 'dev-only' });

      const intoPreview = await t.call(dev, 'POST', env(pid, '/import'), {
        environment: 'preview',
        variables: [{ key: 'KEEP', value: 'p' }],
      });
      expect(intoPreview.body.data).toEqual({ created: 1, updated: 0, skipped: 0 });
      const empty = await t.call(dev, 'POST', env(pid, '/import'), { variables: [] });
      expect(empty.body.data).toEqual({ created: 0, updated: 0, skipped: 0 });
    });

    it('rejects the whole import when one entry is invalid, naming it', async () => {
      const pid = await newProject();
      const res = await t.call(dev, 'POST', env(pid, '/import'), {
        variables: [
          { key: 'GOOD', value: '1' },
          { key: 'bad-key', value: '2' },
          { key: 'ALSO_GOOD', value: '3', colour: 'red' },
        ],
        environment: 'qa',
      });
      expect(res.status).toBe(400);
      expect(paths(res)).toEqual(['environment', 'variables.1.key', 'variables.2.colour']);
      expect(await rowsOf(pid)).toEqual([]);
    });

    it('rejects keys given twice, naming the index', async () => {
      const pid = await newProject();
      const res = await t.call(dev, 'POST', env(pid, '/import'), {
        variables: [
          { key: 'A', value: '1' },
          { key: 'B', value: '2' },
          { key: 'A', value: '3' },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([
        { path: 'variables.2.key', message: 'duplicates variables.0.key ("A"); give each key once' },
      ]);
      expect(await rowsOf(pid)).toEqual([]);
    });

    it('writes nothing when a write fails halfway (one transaction)', async () => {
      const pid = await newProject();
      await t.call(alice, 'POST', env(pid), { key: 'EXISTING', value: 'before' });
      const cipher = t.deps.cipher;
      const realEncrypt = cipher.encrypt.bind(cipher);
      cipher.encrypt = (plaintext: string) => {
        if (plaintext === 'boom') throw new Error('disk on fire');
        return realEncrypt(plaintext);
      };
      try {
        const res = await t.call(dev, 'POST', env(pid, '/import'), {
          overwrite: true,
          variables: [
            { key: 'NEW1', value: 'n1' },
            { key: 'EXISTING', value: 'after' },
            { key: 'NEW2', value: 'boom' },
          ],
        });
        expect(res.status).toBe(500);
        expect(res.body.error.code).toBe('INTERNAL_ERROR');
      } finally {
        cipher.encrypt = realEncrypt;
      }
      const rows = await rowsOf(pid);
      expect(rows.map((r) => [r.key, t.deps.cipher.decrypt(r.value_ciphertext)])).toEqual([
        ['EXISTING', 'before'],
      ]);
    });
  });

  describe('a stored value that cannot be decrypted', () => {
    it('fails loudly (500 naming the variable), never reads as empty', async () => {
      const pid = await newProject();
      await t.call(alice, 'POST', env(pid), { key: 'PLAIN', value: 'hello' });
      await t.call(alice, 'POST', env(pid), { key: 'TOKEN', value: 'abc', encrypted: true });
      const [plain, token] = await rowsOf(pid);
      // Flip one character of the ciphertext body: GCM's tag no longer matches.
      const tamper = (c: string) => c.slice(0, -2) + (c.at(-2) === 'A' ? 'B' : 'A') + c.slice(-1);
      await t.deps.db
        .updateTable('env_vars')
        .set({ value_ciphertext: tamper(plain!.value_ciphertext) })
        .where('id', '=', plain!.id)
        .execute();

      const list = await t.call(alice, 'GET', env(pid));
      expect(list.status).toBe(500);
      expect(list.body.error.code).toBe('INTERNAL_ERROR');
      expect(list.body.error.message).toContain('The stored value of PLAIN (production) cannot be decrypted');
      expect(list.body.error.message).toContain('SLIPWAY_ENCRYPTION_KEY');
      const exported = await t.call(alice, 'GET', env(pid, '/export'));
      expect(exported.status).toBe(500);
      expect(exported.body.error.message).toContain('PLAIN');
      await expect(resolveBuildEnv(t.deps, pid, 'production')).rejects.toThrow(
        /The stored value of PLAIN \(production\) cannot be decrypted/,
      );

      // A secret is not decrypted for a masked read, but export and builds still refuse it.
      await t.call(alice, 'DELETE', env(pid, '/PLAIN'));
      await t.deps.db
        .updateTable('env_vars')
        .set({ value_ciphertext: 'garbage' })
        .where('id', '=', token!.id)
        .execute();
      const masked = await t.call(alice, 'GET', env(pid));
      expect(masked.status).toBe(200);
      expect(masked.body.data[0]).toMatchObject({ key: 'TOKEN', value: null });
      const json = await t.call(alice, 'GET', env(pid, '/export?format=json'));
      expect(json.status).toBe(500);
      expect(json.body.error.message).toContain('TOKEN');
    });
  });

  it('resolveBuildEnv gives the variables of one environment and the secrets to mask', async () => {
    const pid = await newProject();
    await t.call(alice, 'POST', env(pid, '/import'), {
      variables: [
        { key: 'NODE_ENV', value: 'production' },
        { key: 'SHORT', value: 'pw', encrypted: true },
        { key: 'LONG', value: 'a-much-longer-secret', encrypted: true },
        { key: 'EMPTY_SECRET', value: '', encrypted: true },
        { key: 'SAME', value: 'pw', encrypted: true },
      ],
    });
    await t.call(alice, 'POST', env(pid), { key: 'ONLY_PREVIEW', value: 'p', environment: 'preview' });
    const prod = await resolveBuildEnv(t.deps, pid, 'production');
    expect(prod).toEqual({
      vars: {
        EMPTY_SECRET: '',
        LONG: 'a-much-longer-secret',
        NODE_ENV: 'production',
        SAME: 'pw',
        SHORT: 'pw',
      },
      secrets: ['a-much-longer-secret', 'pw'],
    });
    expect(await resolveBuildEnv(t.deps, pid, 'preview')).toEqual({
      vars: { ONLY_PREVIEW: 'p' },
      secrets: [],
    });
    expect(await resolveBuildEnv(t.deps, pid, 'development')).toEqual({ vars: {}, secrets: [] });
  });
});

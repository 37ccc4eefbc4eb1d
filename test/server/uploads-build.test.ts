import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createArtifactStore } from '../../server/features/builds/artifacts.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Real builds of uploaded files: the source built in the sandbox, or prebuilt output served as is. */
describe('deployments of uploaded files', () => {
  let s: Stack;
  let api: ReturnType<Stack['client']>;
  let projectId: string;

  beforeAll(async () => {
    s = await startStack();
    const { token, orgId } = await s.user();
    api = s.client(token);
    // The repository is never cloned for these deployments.
    const project = await api.projects.create({
      name: 'uploaded',
      repositoryUrl: 'https://example.invalid/never-cloned.git',
      organizationId: orgId,
    });
    projectId = project.id;
  });
  afterAll(() => s?.stop());

  /** Uploads what is missing, as a client would, and deploys the list; returns once it finished. */
  async function deploy(files: Record<string, string | { text: string; mode: number }>, prebuilt = false) {
    const list = Object.entries(files).map(([path, f]) => {
      const text = typeof f === 'string' ? f : f.text;
      return {
        path,
        text,
        sha256: sha(text),
        size: Buffer.byteLength(text),
        mode: typeof f === 'string' ? 0o644 : f.mode,
      };
    });
    const { missing } = await api.uploads.missing(
      projectId,
      list.map((f) => f.sha256),
    );
    for (const f of list.filter((x) => missing.includes(x.sha256))) {
      await api.uploads.upload(projectId, f.sha256, Buffer.from(f.text));
    }
    const created = await api.deployments.create(projectId, {
      files: list.map(({ path, sha256, size, mode }) => ({ path, sha256, size, mode })),
      prebuilt,
    });
    const done = await waitFor(
      `deployment ${created.id} to finish`,
      async (): Promise<Deployment | null> => {
        const d = await api.deployments.get(created.id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      60_000,
    );
    return { deployment: done, missing: missing.length };
  }

  it('builds an uploaded source with its build script, keeping executable modes', async () => {
    const { deployment, missing } = await deploy({
      'package.json': JSON.stringify({ name: 'up', private: true, scripts: { build: './make.sh' } }),
      'make.sh': {
        text: '#!/bin/sh\nset -e\nmkdir -p dist\ncp index.html dist/\necho built > dist/built.txt\n',
        mode: 0o755,
      },
      'index.html': '<h1>built from an upload</h1>',
    });
    expect(missing).toBe(3);
    expect(deployment.errorMessage).toBeNull();
    expect(deployment).toMatchObject({ status: 'live', source: 'upload' });
    expect(await (await s.fetchFromEdge(deployment.url)).text()).toBe('<h1>built from an upload</h1>');
    expect((await (await s.fetchFromEdge(new URL('/built.txt', deployment.url).href)).text()).trim()).toBe(
      'built',
    );
    const log = (await api.deployments.logs(deployment.id, { tail: 500 })).logs;
    expect(log).toContain('==> Writing 3 uploaded files');
    expect(log).not.toContain('Cloning');
  });

  it('serves prebuilt output as it is, and sends only what changed on a redeploy', async () => {
    const site = { 'index.html': '<h1>prebuilt</h1>', 'assets/app.js': 'console.log(1)' };
    const first = await deploy(site, true);
    expect(first.deployment).toMatchObject({ status: 'live', source: 'prebuilt' });
    expect(await (await s.fetchFromEdge(first.deployment.url)).text()).toBe('<h1>prebuilt</h1>');
    expect(await (await s.fetchFromEdge(new URL('/assets/app.js', first.deployment.url).href)).text()).toBe(
      'console.log(1)',
    );
    const log = (await api.deployments.logs(first.deployment.id, { tail: 500 })).logs;
    expect(log).toContain('prebuilt: no build');

    const second = await deploy({ ...site, 'index.html': '<h1>prebuilt, changed</h1>' }, true);
    expect(second.missing).toBe(1);
    expect(await (await s.fetchFromEdge(second.deployment.url)).text()).toBe('<h1>prebuilt, changed</h1>');
    // The unchanged file is stored once, for both deployments.
    expect(await (await s.fetchFromEdge(new URL('/assets/app.js', second.deployment.url).href)).text()).toBe(
      'console.log(1)',
    );
    const artifacts = await s.running.deps.db
      .selectFrom('deployments')
      .select('artifact_id')
      .where('id', 'in', [first.deployment.id, second.deployment.id])
      .execute();
    const store = createArtifactStore(s.running.deps.config.artifactsDir);
    const manifests = await Promise.all(artifacts.map((a) => store.readManifest(a.artifact_id!)));
    expect(manifests.map((m) => m?.files['/assets/app.js'])).toEqual([
      { hash: sha('console.log(1)'), size: 14 },
      { hash: sha('console.log(1)'), size: 14 },
    ]);
    // Nothing of these deployments is left in the workspaces (the copies were handed to the store).
    const workspaces = s.running.deps.config.workspacesDir;
    for (const d of [first.deployment, second.deployment])
      expect(existsSync(join(workspaces, d.id))).toBe(false);
  });
});

import { chmodSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import type { LookupAll } from '../../server/core/ssrf.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const UNREACHABLE =
  "is not reachable from builds (loopback, private, link-local and the server's own addresses are refused; " +
  'an operator can allow hosts with SLIPWAY_SANDBOX_ALLOW)';

/**
 * The build checks the repository URL again, in full, before its checkout: what the API let
 * through can be refused by then, because DNS answered otherwise or the path changed.
 */
describe('repository URL rules at build time', () => {
  let s: Stack;
  let token: string;
  let orgId: string;
  let repo: GitRepo;
  let dir: string;
  // A name the API cannot check without DNS, which the builds' resolver points at loopback.
  const lookup: LookupAll = async (host) => {
    if (host === 'repo.test') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };

  beforeAll(async () => {
    s = await startStack({ lookup });
    ({ token, orgId } = await s.user('builder@example.com'));
    repo = createGitRepo({ files: { 'index.html': '<h1>hello</h1>' } });
    dir = mkdtempSync(join(tmpdir(), 'slipway-swap-'));
    // Builds read the repository as the sandbox's user, who must be able to pass through.
    chmodSync(dir, 0o711);
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const api = () => s.client(token);
  const finished = (id: string) =>
    waitFor(
      `deployment ${id} to finish`,
      async (): Promise<Deployment | null> => {
        const d = await api().deployments.get(id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      20_000,
    );

  it('fails the build of a host that resolves to loopback, before any checkout', async () => {
    const project = await api().projects.create({
      name: 'by-name',
      repositoryUrl: 'git://repo.test/web.git',
      organizationId: orgId,
    });
    const d = await finished((await api().deployments.create(project.id)).id);
    expect(d.status).toBe('failed');
    const message = `The repository URL is refused: repo.test resolves to an address that ${UNREACHABLE}.`;
    expect(d.errorMessage).toBe(message);
    const errors = await api().deployments.logs(d.id, { type: 'error' });
    expect(errors.logs).toContain(message);
    const all = await api().deployments.logs(d.id, { tail: 1000 });
    expect(all.logs).not.toMatch(/Cloning/);
  });

  it('fails the build of a local path that became a link into the data directory', async () => {
    const path = join(dir, 'current');
    symlinkSync(repo.dir, path);
    const project = await api().projects.create({
      name: 'swapped',
      repositoryUrl: `file://${path}`,
      organizationId: orgId,
    });
    const first = await finished((await api().deployments.create(project.id)).id);
    expect(first.status).toBe('live');

    rmSync(path);
    symlinkSync(s.dataDir, path);
    const second = await finished((await api().deployments.create(project.id)).id);
    expect(second.status).toBe('failed');
    const message = `The repository URL is refused: ${path} is in, or contains, the service's data or artifacts directory: repositories are never read from there.`;
    expect(second.errorMessage).toBe(message);
    expect((await api().deployments.logs(second.id, { type: 'error' })).logs).toContain(message);
  });
});

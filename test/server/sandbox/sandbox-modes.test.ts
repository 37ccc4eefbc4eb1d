import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDeployment } from '../../../server/features/builds/build-deployment.ts';
import { BuildError } from '../../../server/platform/sandbox/build-error.ts';
import { createArtifactStore } from '../../../server/features/builds/artifacts.ts';
import { loadConfig } from '../../../server/platform/config.ts';
import { createSandbox, SandboxUnavailableError } from '../../../server/platform/sandbox/index.ts';
import { systemLookup } from '../../../server/core/ssrf.ts';
import { createGitRepo } from '../../helpers/git-repo.ts';

const dir = mkdtempSync(join(tmpdir(), 'slipway-modes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const opts = { dataDir: dir, workspacesDir: join(dir, 'workspaces'), lookup: systemLookup };
const config = (env: Record<string, string> = {}) => loadConfig({ SLIPWAY_DATA_DIR: dir, ...env }).sandbox;

describe('where the sandbox cannot run', () => {
  it('refuses every build and app, naming what is missing, and changes nothing', async () => {
    const sandbox = await createSandbox(config(), {
      ...opts,
      tools: { missing: ['bwrap (Debian package bubblewrap)', 'pasta (Debian package passt)'] },
    });
    expect(sandbox.unavailable).toMatch(
      /^Builds and server apps are refused: the sandbox cannot run on this machine: these programs are missing: bwrap \(Debian package bubblewrap\), pasta \(Debian package passt\)\. Install them\. .*SLIPWAY_SANDBOX=off/,
    );
    expect(() => sandbox.plan({ argv: ['true'], cwd: dir, env: {}, writable: [], readOnly: [] })).toThrow(
      SandboxUnavailableError,
    );

    const repo = createGitRepo({ files: { 'index.html': '<h1>hi</h1>' } });
    const lines: string[] = [];
    const result = await buildDeployment({
      repositoryUrl: repo.url,
      ref: 'main',
      env: {},
      secrets: [],
      workspaceRoot: join(dir, 'workspaces', 'refused'),
      artifacts: createArtifactStore(join(dir, 'artifacts')),
      timeoutMs: 10_000,
      maxOutputBytes: 1024 * 1024,
      log: (type, line) => lines.push(`${type}: ${line}`),
      sandbox,
    }).catch((err: Error) => err);
    repo.remove();
    expect(result).toBeInstanceOf(BuildError);
    expect(lines).toEqual([`error: ${sandbox.unavailable}`]);
  });

  it('with SLIPWAY_SANDBOX=off runs commands as they are, and every build log starts with a warning', async () => {
    const sandbox = await createSandbox(config({ SLIPWAY_SANDBOX: 'off' }), opts);
    expect(sandbox.mode).toBe('off');
    expect(sandbox.unavailable).toBeNull();
    expect(sandbox.banner()).toEqual([
      "WARNING: SLIPWAY_SANDBOX=off: this build runs with the service's own privileges and no isolation. " +
        'Use this only when every repository is trusted.',
    ]);
    expect(
      sandbox.plan({ argv: ['git', 'init'], cwd: dir, env: { A: '1' }, writable: [], readOnly: [] }),
    ).toEqual({
      command: 'git',
      args: ['init'],
      env: { A: '1' },
    });
  });

  it('rejects a sandbox setting it does not know, naming the variable', () => {
    expect(() => config({ SLIPWAY_SANDBOX: 'docker' })).toThrow(
      /SLIPWAY_SANDBOX must be "bubblewrap" .* or "off"/,
    );
    expect(() => config({ SLIPWAY_SANDBOX_USER: '0:0' })).toThrow(
      /SLIPWAY_SANDBOX_USER must be uid:gid of an unprivileged user/,
    );
    expect(() => config({ SLIPWAY_SANDBOX_DISK: 'lots' })).toThrow(/SLIPWAY_SANDBOX_DISK must be a size/);
  });
});

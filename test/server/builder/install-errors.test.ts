import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactStore } from '../../../server/features/builds/artifacts.ts';
import { buildDeployment } from '../../../server/features/builds/build-deployment.ts';
import { createUsageFilter, installHint } from '../../../server/features/builds/package-manager-output.ts';
import { createGitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import { testSandbox } from '../../helpers/sandbox.ts';

/** A failed install shows the package manager's reason and what to do, not its usage text. */
describe('install errors', { timeout: 120_000 }, () => {
  let root: string;
  let repo: GitRepo;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'slipway-install-errors-'));
    chmodSync(root, 0o711);
    // The lockfile predates the dependency: `npm ci` refuses it.
    repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'stale',
          version: '1.0.0',
          dependencies: { dep: 'file:dep' },
          scripts: { build: 'echo built' },
        }),
        'package-lock.json': JSON.stringify({
          name: 'stale',
          version: '1.0.0',
          lockfileVersion: 3,
          requires: true,
          packages: { '': { name: 'stale', version: '1.0.0' } },
        }),
        'dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0' }),
      },
    });
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    repo?.remove();
  });

  it('a lockfile out of date: npm’s reason, no usage text, and a one-line hint in the error', async () => {
    const lines: string[] = [];
    const err = await buildDeployment({
      sandbox: await testSandbox(),
      repositoryUrl: repo.url,
      ref: 'main',
      env: { npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
      secrets: [],
      workspaceRoot: join(root, 'workspaces'),
      artifacts: createArtifactStore(join(root, 'artifacts')),
      timeoutMs: 120_000,
      maxOutputBytes: 10 * 1024 * 1024,
      log: (_type, line) => lines.push(line),
    }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(
      'Installing dependencies failed: "npm ci" exited with code 1. package-lock.json does not match package.json: run `npm install` and commit package-lock.json.',
    );
    const install = lines.slice(lines.indexOf('==> Installing dependencies: npm ci'));
    expect(install.join('\n')).toContain(
      'can only install packages when your package.json and package-lock.json',
    );
    expect(install).toContain("npm error (npm's usage text left out)");
    expect(install.some((l) => /Options:|aliases:|--install-strategy/.test(l))).toBe(false);
    expect(install.length).toBeLessThan(20);
  });
});

describe('package manager output', () => {
  it('leaves out npm’s usage block only, and keeps what follows it', () => {
    const filter = createUsageFilter();
    const input = [
      'npm error code EUSAGE',
      'npm error Missing: dep@1.0.0 from lock file',
      'npm error Clean install a project',
      'npm error Usage:',
      'npm error npm ci',
      'npm error Options:',
      'npm error [--omit <dev|optional|peer>]',
      'npm error Run "npm help ci" for more info',
      'npm error A complete log of this run can be found in: /home/.npm/_logs/x.log',
      'plain line',
    ];
    expect(input.map(filter).filter((l) => l !== null)).toEqual([
      'npm error code EUSAGE',
      'npm error Missing: dep@1.0.0 from lock file',
      'npm error Clean install a project',
      "npm error (npm's usage text left out)",
      'npm error A complete log of this run can be found in: /home/.npm/_logs/x.log',
      'plain line',
    ]);
  });

  it('hints at the lockfile of each package manager, and at nothing else', () => {
    expect(installHint([' ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile"'])).toMatch(
      /^pnpm-lock\.yaml does not match package\.json: run `pnpm install`/,
    );
    expect(
      installHint([
        '➤ YN0028: │ The lockfile would have been modified by this install, which is explicitly forbidden.',
      ]),
    ).toMatch(/^yarn\.lock does not match/);
    expect(installHint(['npm error 404 Not Found - GET https://registry.npmjs.org/nope'])).toBeNull();
  });
});

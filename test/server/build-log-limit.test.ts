import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createLogBuffer } from '../../server/jobs/log-buffer.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { insertDeployment, insertProject } from '../helpers/edge.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const LIMIT = 64 * 1024;
const CUT =
  'Build log cut at 64 KiB (SLIPWAY_BUILD_LOG_LIMIT): later lines are not stored; the build goes on.';
/** Room for the lines Slipway adds itself (phases, the cut, the summary, "Live at"). */
const OWN_LINES = 4096;

/** A build script that prints `lines` numbered lines of 100 bytes (about 2.9 MiB for 30000). */
const chattyBuild = (lines: number, exitCode: number) =>
  "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
  `const out = Array.from({ length: ${lines} }, (_, i) => 'line ' + String(i).padStart(6, '0') + ' ' + 'x'.repeat(87)).join('\\n');\n` +
  "process.stdout.write(out + '\\n');\n" +
  "mkdirSync('dist', { recursive: true });\n" +
  "writeFileSync('dist/index.html', '<h1>chatty</h1>');\n" +
  // exitCode, not exit(): exit() would cut the pipe write short.
  `process.exitCode = ${exitCode};\n`;

const repoWith = (lines: number, exitCode: number) =>
  createGitRepo({
    files: {
      'package.json': JSON.stringify({ name: 'chatty', private: true, scripts: { build: 'node build.mjs' } }),
      'build.mjs': chattyBuild(lines, exitCode),
    },
  });

/** A real build whose script prints far more than SLIPWAY_BUILD_LOG_LIMIT. */
describe('build log limit (SLIPWAY_BUILD_LOG_LIMIT)', () => {
  let s: Stack;
  let token: string;
  let orgId: string;
  const repos: GitRepo[] = [];

  beforeAll(async () => {
    s = await startStack({ env: { SLIPWAY_BUILD_LOG_LIMIT: '64KiB' } });
    ({ token, orgId } = await s.user('chatty@example.com'));
  });
  afterAll(async () => {
    await s?.stop();
    for (const r of repos) r.remove();
  });

  const api = () => s.client(token);

  async function deploy(name: string, repo: GitRepo): Promise<Deployment> {
    repos.push(repo);
    const project = await api().projects.create({ name, repositoryUrl: repo.url, organizationId: orgId });
    const created = await api().deployments.create(project.id);
    return waitFor(
      `deployment ${created.id} to finish`,
      async () => {
        const d = await api().deployments.get(created.id);
        return (d.status === 'live' || d.status === 'failed') && d;
      },
      60_000,
    );
  }

  /** Every stored line of one log, oldest first, straight from the database. */
  async function stored(deploymentId: string, type: 'build' | 'error') {
    const rows = await s.running.deps.db
      .selectFrom('deployment_logs')
      .select('line')
      .where('deployment_id', '=', deploymentId)
      .where('type', '=', type)
      .orderBy('id')
      .execute();
    return rows.map((r) => r.line);
  }

  it('stores at most the limit, says where it was cut and how much was left out, and goes live', async () => {
    const d = await deploy('chatty', repoWith(30_000, 0));
    expect(d.status).toBe('live');
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>chatty</h1>');

    const lines = await stored(d.id, 'build');
    const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
    expect(bytes).toBeLessThanOrEqual(LIMIT + OWN_LINES);
    // The build printed ~2.9 MiB: the stored log is the first 64 KiB of it, not a sample.
    expect(bytes).toBeGreaterThan(LIMIT - 1024);
    expect(lines.filter((l) => l === CUT)).toHaveLength(1);
    const printed = lines.filter((l) => l.startsWith('line '));
    expect(printed[0]).toMatch(/^line 000000 x{87}$/);
    const kept = printed.length;
    expect(kept).toBeGreaterThan(500);
    expect(kept).toBeLessThan(700);
    // Every line after the cut is gone, the builder's own phase lines included.
    expect(lines.indexOf(CUT)).toBe(lines.indexOf(printed[kept - 1]!) + 1);
    const summary = lines.filter((l) => l.startsWith('Build log: '));
    expect(summary).toHaveLength(1);
    const left = Number(
      /^Build log: (\d+) lines of output \(.+\) left out past the 64 KiB limit/.exec(summary[0]!)?.[1],
    );
    // The 30000 printed lines minus those kept, plus the builder's phase lines after the cut.
    expect(left).toBeGreaterThanOrEqual(30_000 - kept);
    expect(left).toBeLessThan(30_000 - kept + 10);
    // The last lines, written before the deployment went live so that a follower of the log sees them.
    expect(lines.at(-2)).toMatch(/^==> Live at http:\/\/.+/);
    expect(lines.at(-1)).toBe(summary[0]);

    // The same through the API.
    const logs = await api().deployments.logs(d.id, { tail: 10_000 });
    expect(logs.logs).toContain(CUT);
  });

  it("stores a failing build's error after the cut", async () => {
    const d = await deploy('chatty-fails', repoWith(30_000, 3));
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toBe('Building failed: "npm run build" exited with code 3.');
    const lines = await stored(d.id, 'build');
    expect(lines.reduce((n, l) => n + Buffer.byteLength(l), 0)).toBeLessThanOrEqual(LIMIT + OWN_LINES);
    expect(lines.filter((l) => l === CUT)).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/^Build log: \d+ lines of output .* left out past the 64 KiB limit/);
    expect(await stored(d.id, 'error')).toEqual(['Building failed: "npm run build" exited with code 3.']);
    const errors = await api().deployments.logs(d.id, { type: 'error' });
    expect(errors.logs).toBe('Building failed: "npm run build" exited with code 3.');
  });

  it('leaves a build under the limit untouched', async () => {
    const d = await deploy('quiet', repoWith(100, 0));
    expect(d.status).toBe('live');
    const lines = await stored(d.id, 'build');
    expect(lines.filter((l) => l.startsWith('line '))).toHaveLength(100);
    expect(lines.some((l) => l.startsWith('Build log'))).toBe(false);
  });
});

describe('the build log buffer', () => {
  let t: TestApp;
  let orgId: string;

  beforeAll(async () => {
    t = await createTestApp();
    orgId = (await t.user('buffer@example.com')).orgId;
  });
  afterAll(async () => {
    await t?.close();
  });

  const bytesOf = async (deploymentId: string) => {
    const row = await t.deps.db
      .selectFrom('deployment_logs')
      .select(sql<number | string>`sum(octet_length(line))`.as('n'))
      .where('deployment_id', '=', deploymentId)
      .where('type', '=', 'build')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it('counts what earlier attempts of the deployment stored, so a retry cannot store the limit again', async () => {
    const d = await insertDeployment(t, (await insertProject(t, orgId)).id, { status: 'building' });
    const line = 'é'.repeat(50); // 100 bytes, 50 characters: the limit is in bytes
    const first = await createLogBuffer(t.deps, d.id, { limitBytes: 1000 });
    for (let i = 0; i < 9; i++) first.push('build', line);
    await first.end();
    expect(await bytesOf(d.id)).toBe(900);

    const retry = await createLogBuffer(t.deps, d.id, { limitBytes: 1000 });
    retry.push('build', line);
    retry.push('build', line);
    retry.push('build', line);
    retry.push('error', 'why it failed');
    retry.note('==> Deploying');
    await retry.end();
    const rows = await t.deps.db
      .selectFrom('deployment_logs')
      .select(['type', 'line'])
      .where('deployment_id', '=', d.id)
      .orderBy('id')
      .execute();
    expect(rows.slice(9)).toEqual([
      { type: 'build', line },
      {
        type: 'build',
        line: 'Build log cut at 1000 bytes (SLIPWAY_BUILD_LOG_LIMIT): later lines are not stored; the build goes on.',
      },
      { type: 'build', line: '==> Deploying' },
      {
        type: 'build',
        line: 'Build log: 2 lines of output (200 bytes) left out past the 1000 bytes limit (SLIPWAY_BUILD_LOG_LIMIT).',
      },
      { type: 'error', line: 'why it failed' },
    ]);
  });
});

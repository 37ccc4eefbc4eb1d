import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { createLogBuffer } from '../../server/features/builds/job/log-buffer.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { insertDeployment, insertProject } from '../helpers/edge.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const LIMIT = 64 * 1024;
const CUT =
  'Build log cut at 48 KiB (SLIPWAY_BUILD_LOG_LIMIT is 64 KiB): later output is left out but for its last 16 KiB, stored when the build ends; the build goes on.';
/** Room for the lines Slipway adds itself (phases, the cut, the summary, "Live at"). */
const OWN_LINES = 4096;
const LEFT_OUT_HERE = /^Build log: ([\d.]+) (bytes|KiB|MiB) of output left out here\.$/;
const SUMMARY =
  /^Build log: ([\d.]+) (bytes|KiB|MiB) of output left out in all past the 64 KiB limit \(SLIPWAY_BUILD_LOG_LIMIT\)\.(?: The build waited up to [\d.]+m?s on its output, read at most \d+ MiB\/s past the limit\.)?$/;
const UNITS = { bytes: 1, KiB: 1024, MiB: 1024 * 1024 };
/** The bytes a "left out" line names. */
const leftOutBytes = (line: string, pattern: RegExp) => {
  const m = pattern.exec(line);
  if (!m) throw new Error(`not a "left out" line: ${line}`);
  return Number(m[1]) * UNITS[m[2] as keyof typeof UNITS];
};

/**
 * A build script that prints `lines` numbered lines of 100 bytes (about 2.9 MiB for 30000) and,
 * when it fails, a last line on stderr saying why.
 */
const chattyBuild = (lines: number, exitCode: number) =>
  "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
  `const out = Array.from({ length: ${lines} }, (_, i) => 'line ' + String(i).padStart(6, '0') + ' ' + 'x'.repeat(87)).join('\\n');\n` +
  "process.stdout.write(out + '\\n');\n" +
  (exitCode ? "process.stderr.write('ERROR: the chatty build broke at its very end\\n');\n" : '') +
  "mkdirSync('dist', { recursive: true });\n" +
  "writeFileSync('dist/index.html', '<h1>chatty</h1>');\n" +
  // exitCode, not exit(): exit() would cut the pipe write short.
  `process.exitCode = ${exitCode};\n`;

/**
 * A build script that prints `mib` MiB of 100-byte lines (or of empty lines) as fast as the pipe takes them (one
 * block written again and again), then `flood done`, then an error on stderr, and fails.
 */
const floodBuild = (mib: number, empty = false) =>
  (empty
    ? "const block = '\\n'.repeat(1024 * 1024);\n"
    : `const block = Array.from({ length: 10486 }, (_, i) => 'flood line ' + String(i).padStart(6, '0') + ' ' + 'x'.repeat(81)).join('\\n') + '\\n';\n`) +
  `let left = ${mib};\n` +
  'const more = () => {\n' +
  '  while (left > 0) {\n' +
  '    left--;\n' +
  "    if (!process.stdout.write(block)) return process.stdout.once('drain', more);\n" +
  '  }\n' +
  "  process.stdout.write('flood done\\n', () => {\n" +
  "    process.stderr.write('ERROR: the flood build failed at its end\\n');\n" +
  '    process.exitCode = 2;\n' +
  '  });\n' +
  '};\n' +
  'more();\n';

/**
 * A build script that prints `mib` MiB of numbered 100-byte lines, each number once, as fast as the
 * pipe takes them, then how long that took it (`flood took N ms`), and succeeds.
 */
const timedFloodBuild = (mib: number) =>
  "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
  `const lines = Math.floor((${mib} * 1024 * 1024) / 100);\n` +
  'const started = Date.now();\n' +
  'let next = 0;\n' +
  'const more = () => {\n' +
  '  while (next < lines) {\n' +
  '    let block = "";\n' +
  "    for (const end = Math.min(lines, next + 10000); next < end; next++) block += 'flood ' + String(next).padStart(8, '0') + ' ' + 'x'.repeat(84) + '\\n';\n" +
  "    if (!process.stdout.write(block)) return process.stdout.once('drain', more);\n" +
  '  }\n' +
  "  process.stdout.write('flood took ' + (Date.now() - started) + ' ms\\n');\n" +
  "  mkdirSync('dist', { recursive: true });\n" +
  "  writeFileSync('dist/index.html', '<h1>flooded</h1>');\n" +
  '};\n' +
  'more();\n';

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

  /**
   * Deploys and polls the deployment, one request at a time, until it is done: the slowest of
   * those requests says how the API fared meanwhile.
   */
  async function deployTimed(name: string, repo: GitRepo) {
    repos.push(repo);
    const project = await api().projects.create({ name, repositoryUrl: repo.url, organizationId: orgId });
    const created = await api().deployments.create(project.id);
    let slowest = 0;
    let requests = 0;
    const d = await waitFor(
      `deployment ${created.id} to finish`,
      async () => {
        const started = performance.now();
        const cur = await api().deployments.get(created.id);
        slowest = Math.max(slowest, performance.now() - started);
        requests++;
        return (cur.status === 'live' || cur.status === 'failed') && cur;
      },
      120_000,
    );
    return { d, slowest, requests };
  }

  /** The numbers of the `line NNNNNN` lines printed by chattyBuild, in the order stored. */
  const numbers = (lines: string[]) =>
    lines.filter((l) => /^line \d{6} x{87}$/.test(l)).map((l) => Number(l.slice(5, 11)));
  const bytesOf = (lines: string[]) => lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
  const consecutive = (xs: number[]) => xs.every((x, i) => i === 0 || x === xs[i - 1]! + 1);

  it('stores the head and the end of the output within the limit, says what was left out, and goes live', async () => {
    const d = await deploy('chatty', repoWith(30_000, 0));
    expect(d.status).toBe('live');
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>chatty</h1>');

    const lines = await stored(d.id, 'build');
    expect(bytesOf(lines)).toBeLessThanOrEqual(LIMIT + OWN_LINES);
    expect(bytesOf(lines)).toBeGreaterThan(LIMIT - 4096);
    expect(lines.filter((l) => l === CUT)).toHaveLength(1);
    const cutAt = lines.indexOf(CUT);
    // Before the cut: the first lines printed, in order, none missing.
    const head = numbers(lines.slice(0, cutAt));
    expect(head[0]).toBe(0);
    expect(consecutive(head)).toBe(true);
    expect(head.length).toBeGreaterThan(400);
    // After it: how much was left out, then the last lines printed, the very last one included.
    const here = lines.findIndex((l) => LEFT_OUT_HERE.test(l));
    expect(here).toBeGreaterThan(cutAt);
    const tail = numbers(lines.slice(here));
    expect(tail.at(-1)).toBe(29_999);
    expect(consecutive(tail)).toBe(true);
    expect(tail.length).toBeGreaterThan(50);
    // Every printed line is either stored or counted as left out.
    const printedBytes = 30_000 * 101;
    const storedPrinted = numbers(lines).length * 101;
    const left = leftOutBytes(lines[here]!, LEFT_OUT_HERE);
    expect(Math.abs(storedPrinted + left - printedBytes)).toBeLessThan(printedBytes * 0.05);
    // The last lines, written before the deployment went live so that a follower of the log sees them.
    expect(lines.at(-2)).toMatch(/^==> Live at http:\/\/.+/);
    expect(leftOutBytes(lines.at(-1)!, SUMMARY)).toBe(left);

    // The same through the API.
    const logs = await api().deployments.logs(d.id, { tail: 10_000 });
    expect(logs.logs).toContain(CUT);
    expect(logs.logs).toContain(`line 029999 ${'x'.repeat(87)}`);
  });

  it("keeps the end of a failing build's output, where its error is", async () => {
    const d = await deploy('chatty-fails', repoWith(30_000, 3));
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toBe('Building failed: "npm run build" exited with code 3.');
    const lines = await stored(d.id, 'build');
    expect(bytesOf(lines)).toBeLessThanOrEqual(LIMIT + OWN_LINES);
    expect(lines.filter((l) => l === CUT)).toHaveLength(1);
    expect(numbers(lines).at(-1)).toBe(29_999);
    // stderr's line is stored wherever it came in among stdout's (before or after the cut: the
    // pipes are read side by side).
    expect(lines).toContain('ERROR: the chatty build broke at its very end');
    expect(lines.at(-2)).toBe('==> Deployment failed: Building failed: "npm run build" exited with code 3.');
    expect(lines.at(-1)).toMatch(SUMMARY);
    expect(await stored(d.id, 'error')).toEqual(['Building failed: "npm run build" exited with code 3.']);
    const errors = await api().deployments.logs(d.id, { type: 'error' });
    expect(errors.logs).toBe('Building failed: "npm run build" exited with code 3.');
  });

  it('a build flooding 20 MiB of log finishes, keeps its first and last lines, and the API answers meanwhile', async () => {
    const repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'flood',
          private: true,
          scripts: { build: 'node flood.mjs' },
        }),
        'flood.mjs': floodBuild(20),
      },
    });
    const { d, slowest, requests } = await deployTimed('flood', repo);
    expect(d.status).toBe('failed');
    expect(d.errorMessage).toBe('Building failed: "npm run build" exited with code 2.');
    expect(requests).toBeGreaterThan(20);
    // Loose on purpose: before the fix a flood of short lines held requests up for seconds.
    expect(slowest).toBeLessThan(1000);

    const lines = await stored(d.id, 'build');
    expect(bytesOf(lines)).toBeLessThanOrEqual(LIMIT + OWN_LINES);
    const cutAt = lines.indexOf(CUT);
    expect(cutAt).toBeGreaterThan(0);
    const printed = lines.slice(0, cutAt).filter((l) => l.startsWith('flood line '));
    expect(printed[0]).toBe(`flood line 000000 ${'x'.repeat(81)}`);
    expect(printed.length).toBeGreaterThan(400);
    const here = lines.findIndex((l) => LEFT_OUT_HERE.test(l));
    expect(leftOutBytes(lines[here]!, LEFT_OUT_HERE)).toBeGreaterThan(19 * 1024 * 1024);
    const end = lines.slice(here);
    expect(end).toContain(`flood line 010485 ${'x'.repeat(81)}`);
    expect(end.indexOf('flood done')).toBeLessThan(end.indexOf('ERROR: the flood build failed at its end'));
    expect(end.at(-2)).toBe('==> Deployment failed: Building failed: "npm run build" exited with code 2.');
    expect(leftOutBytes(end.at(-1)!, SUMMARY)).toBeGreaterThan(19 * 1024 * 1024);
  });

  it('a flooding build is the one slowed: past 16 MiB its output is read at 2 MiB/s, and its very end is kept', async () => {
    const repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'timed',
          private: true,
          scripts: { build: 'node flood.mjs' },
        }),
        'flood.mjs': timedFloodBuild(24),
      },
    });
    const { d } = await deployTimed('timed-flood', repo);
    expect(d.status).toBe('live');
    expect(await (await s.fetchFromEdge(d.url)).text()).toBe('<h1>flooded</h1>');
    const lines = await stored(d.id, 'build');
    expect(bytesOf(lines)).toBeLessThanOrEqual(LIMIT + OWN_LINES);

    // The log says so when it happens, after the cut.
    const slowed = lines.indexOf(
      'Build log: this build prints more than 2 MiB/s past the limit: its output is read at that pace from now on, and the build waits on it.',
    );
    expect(slowed).toBeGreaterThan(lines.indexOf(CUT));
    expect(lines.indexOf(CUT)).toBeGreaterThan(0);

    // The build itself took the time: 16 MiB at up to 16 MiB/s, then 8 MiB at 2 MiB/s, at least 4 s
    // (less a tick and what its pipe holds); printing the same unread takes it well under a second.
    const took = lines.map((l) => /^flood took (\d+) ms$/.exec(l)).find(Boolean);
    expect(Number(took?.[1])).toBeGreaterThan(3500);
    const summary = SUMMARY.exec(lines.at(-1)!)![0];
    const waited = /waited up to ([\d.]+)s on its output, read at most 2 MiB\/s past the limit\.$/.exec(
      summary,
    );
    expect(Number(waited?.[1])).toBeGreaterThan(3.5);

    // The end of the output, every line of it in the room the log has: the last printed lines,
    // consecutive, up to the very last, then the time.
    const printed = Math.floor((24 * 1024 * 1024) / 100);
    const here = lines.findIndex((l) => LEFT_OUT_HERE.test(l));
    const end = lines.slice(here + 1, lines.indexOf(took![0]));
    const flood = /^flood (\d{8}) x{84}$/;
    expect(end.every((l) => flood.test(l))).toBe(true);
    const tail = end.map((l) => Number(flood.exec(l)![1]));
    expect(tail.at(-1)).toBe(printed - 1);
    expect(consecutive(tail)).toBe(true);
    expect(tail.length).toBeGreaterThan(100);
    // Every printed byte is stored or counted as left out (which the log rounds to 0.5 MiB).
    const head = lines.slice(0, lines.indexOf(CUT)).filter((l) => flood.test(l));
    const accounted = head.length + tail.length + leftOutBytes(lines[here]!, LEFT_OUT_HERE) / 100;
    expect(Math.abs(accounted - printed)).toBeLessThan(printed * 0.03);
  });

  it('a flood of 20 MiB of empty lines is cut like any other output', async () => {
    const repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({
          name: 'empty',
          private: true,
          scripts: { build: 'node flood.mjs' },
        }),
        'flood.mjs': floodBuild(20, true),
      },
    });
    const { d, slowest } = await deployTimed('empty-flood', repo);
    expect(d.status).toBe('failed');
    // Before: an empty line counted 0 bytes, so all 21 million were stored, and the API stalled.
    expect(slowest).toBeLessThan(1000);
    const lines = await stored(d.id, 'build');
    expect(lines.length).toBeLessThan(LIMIT / 32 + 100);
    expect(lines.filter((l) => l === '').length).toBeGreaterThan(1000);
    const end = lines.slice(lines.findIndex((l) => LEFT_OUT_HERE.test(l)));
    expect(end.indexOf('flood done')).toBeGreaterThan(0);
    expect(end).toContain('ERROR: the flood build failed at its end');
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

  const rowsOf = (deploymentId: string) =>
    t.deps.db
      .selectFrom('deployment_logs')
      .select(['type', 'line'])
      .where('deployment_id', '=', deploymentId)
      .orderBy('id')
      .execute();

  it('counts what earlier attempts of the deployment stored, so a retry cannot store the limit again', async () => {
    const d = await insertDeployment(t, (await insertProject(t, orgId)).id, { status: 'building' });
    // 100 bytes, 52 characters: the limit is in bytes.
    const line = (i: number) => String(i).padStart(4, '0') + 'é'.repeat(48);
    const first = await createLogBuffer(t.deps, d.id, { limitBytes: 4000 });
    for (let i = 0; i < 20; i++) first.push('build', line(i));
    await first.end();
    expect(await bytesOf(d.id)).toBe(2000);

    // The retry has 4000 - 20 x 101 bytes left: the head's 3000 less what is stored, then the end.
    const retry = await createLogBuffer(t.deps, d.id, { limitBytes: 4000 });
    for (let i = 20; i < 50; i++) retry.push('build', line(i));
    retry.push('error', 'why it failed');
    retry.note('==> Deploying');
    await retry.end();
    const rows = (await rowsOf(d.id)).slice(20);
    expect(rows.slice(0, 9)).toEqual(
      Array.from({ length: 9 }, (_, i) => ({ type: 'build', line: line(20 + i) })),
    );
    expect(rows[9]).toEqual({
      type: 'build',
      line: 'Build log cut at 2.9 KiB (SLIPWAY_BUILD_LOG_LIMIT is 3.9 KiB): later output is left out but for its last 1000 bytes, stored when the build ends; the build goes on.',
    });
    // Then what was left out, and the last lines that fit in the rest of the limit.
    const m = /^Build log: (.+) of output left out here\.$/.exec(rows[10]!.line);
    const kept = rows.slice(11).findIndex((r) => r.line === '==> Deploying');
    expect(kept).toBeGreaterThan(5);
    expect(rows.slice(11, 11 + kept)).toEqual(
      Array.from({ length: kept }, (_, i) => ({ type: 'build', line: line(50 - kept + i) })),
    );
    const leftOut = 30 - 9 - kept;
    expect(m?.[1]).toBe(`${Math.round((leftOut * 101) / 102.4) / 10} KiB`);
    expect(rows.slice(11 + kept)).toEqual([
      { type: 'build', line: '==> Deploying' },
      {
        type: 'build',
        line: `Build log: ${m?.[1]} of output left out in all past the 3.9 KiB limit (SLIPWAY_BUILD_LOG_LIMIT).`,
      },
      { type: 'error', line: 'why it failed' },
    ]);
    // Everything the deployment stored of its build output, both attempts, is within the limit.
    const costs = (await rowsOf(d.id))
      .filter((r) => r.type === 'build' && /^\d{4}é/.test(r.line))
      .reduce((n, r) => n + Buffer.byteLength(r.line) + 1, 0);
    expect(costs).toBeLessThanOrEqual(4000);
  });

  it('counts an empty or short line as 32 bytes, so a flood of empty lines is cut too', async () => {
    const d = await insertDeployment(t, (await insertProject(t, orgId)).id, { status: 'building' });
    const logs = await createLogBuffer(t.deps, d.id, { limitBytes: 64 * 1024 });
    for (let i = 0; i < 100_000; i++) logs.push('build', i % 2 ? '' : 'x');
    await logs.end();
    const rows = await rowsOf(d.id);
    // Before: every one of the 100000 lines was stored (an empty line counted 0 bytes).
    expect(rows.length).toBeLessThanOrEqual((64 * 1024) / 32 + 5);
    expect(rows.length).toBeGreaterThan((64 * 1024) / 32 - 50);
    expect(rows.at(-1)!.line).toMatch(/^Build log: .* left out in all past the 64 KiB limit/);
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../server/features/builds/run-command.ts';
import { loadConfig } from '../../server/platform/config.ts';
import { createSandbox, type Sandbox, type SandboxShare } from '../../server/platform/sandbox/index.ts';
import { spawnPlanned } from '../../server/platform/sandbox/spawn-planned.ts';
import { systemLookup } from '../../server/core/ssrf.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { ownCgroups } from '../helpers/own-cgroups.ts';
import { parseScrape, sample } from '../helpers/prometheus.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const MiB = 1024 ** 2;
const PROCESSES = 64;
/** A build of this plan may use 256 MiB in all; each process may also use 256 MiB of heap. */
const SHARE: SandboxShare = { plan: 'free', memoryBytes: 256 * MiB, cpu: 1 };

/** Fills `mib` MiB of shared anonymous memory: RLIMIT_DATA (the per-process limit) does not count it. */
const sharedMemory = (mib: number) =>
  `python3 -c "import mmap; m = mmap.mmap(-1, ${mib} << 20, flags=mmap.MAP_SHARED)\n` +
  `for i in range(0, len(m), 4096): m[i] = 1\nprint('filled ${mib}')"`;

const dir = mkdtempSync(join(tmpdir(), 'slipway-cgroups-'));
let sandbox: Sandbox;
let unavailable: string | null = null;
let noGroups: string | null = null;

beforeAll(async () => {
  const config = loadConfig({
    SLIPWAY_DATA_DIR: dir,
    SLIPWAY_SANDBOX_PROCESSES: String(PROCESSES),
    SLIPWAY_SANDBOX_MEMORY: '256MiB',
    SLIPWAY_SANDBOX_TMP_SIZE: '64MiB',
  });
  sandbox = await createSandbox(config.sandbox, {
    dataDir: dir,
    workspacesDir: join(dir, 'w'),
    lookup: systemLookup,
  });
  unavailable = sandbox.unavailable;
  noGroups = unavailable ?? sandbox.cgroups.unavailable;
  if (unavailable) console.warn(`NOTICE: the sandbox memory attacks are skipped: ${unavailable}`);
  else if (noGroups)
    console.warn(`NOTICE: the control group tests are skipped: no control groups here: ${noGroups}`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `script` as a build command runs, in the plan's share. */
async function run(script: string, opts: { network?: boolean; share?: SandboxShare } = {}) {
  const lines: string[] = [];
  const result = await runCommand({
    argv: ['sh', '-c', script],
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    timeoutMs: 60_000,
    sandbox: sandbox.withShare(opts.share ?? SHARE),
    writable: [],
    network: opts.network ?? true,
    onLine: (_s, line) => lines.push(line),
  });
  return { ...result, out: lines.join('\n') };
}

/** This process's groups left under the parents (slipway/, and the plans' pools in it). */
const ownGroups = () => ownCgroups(sandbox.cgroups.parents);

/** A group's file, for v1 (one directory per controller) and v2 alike. */
function groupFile(procs: readonly string[], file: string): string {
  const controller = file.split('.')[0]!;
  const dirs = procs.map((p) => dirname(p));
  const found = dirs.find((d) => d.includes(`/${controller}/`)) ?? dirs[0]!;
  return readFileSync(join(found, file), 'utf8').trim();
}

describe('/dev/shm is a private tmpfs of the /tmp size', { timeout: 60_000 }, () => {
  it('writing 250 MiB to /dev/shm with a 64 MiB /tmp fails with ENOSPC', async (ctx) => {
    if (unavailable) ctx.skip();
    // Before, /dev/shm was a folder of bwrap's /dev, a tmpfs of half the machine's memory.
    const r = await run(
      'dd if=/dev/zero of=/dev/shm/fill bs=1M count=250 2>&1; echo "dd=$?"; df -B1 /dev/shm',
    );
    expect(r.out).toMatch(/No space left on device/);
    expect(r.out).toMatch(/dd=1/);
    expect(r.out).toMatch(new RegExp(`tmpfs\\s+${64 * MiB}\\s.*/dev/shm`));
  });
});

describe('each sandbox is bounded as a whole by a control group', { timeout: 60_000 }, () => {
  for (const network of [true, false]) {
    it(`600 MiB of shared memory under a 256 MiB group is killed (${network ? 'a build' : 'a checkout'}); a small command is not`, async (ctx) => {
      if (noGroups) ctx.skip();
      const attack = await run(sharedMemory(600), { network });
      expect(attack.out).not.toMatch(/filled 600/);
      expect(attack.exitCode).not.toBe(0);
      expect(attack.group).toMatchObject({ memoryBytes: 256 * MiB, removed: true });
      expect(attack.group!.oomKills).toBeGreaterThanOrEqual(1);

      const small = await run(sharedMemory(32), { network });
      expect({ code: small.exitCode, out: small.out }).toEqual({ code: 0, out: 'filled 32' });
      expect(small.group).toMatchObject({ oomKills: 0, removed: true });
    });
  }

  it('tenant code cannot leave its group: no cgroup file system to write to or to mount, and the limit still holds', async (ctx) => {
    if (noGroups) ctx.skip();
    // Each way out it might try: the host's hierarchy at its usual path, a mount of its own
    // (it is root in its user namespace), and the v2 mount; then the memory it wanted.
    const r = await run(
      [
        'for f in /sys/fs/cgroup/memory/cgroup.procs /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/memory/slipway/cgroup.procs; do',
        '  (echo $$ > "$f") 2>/dev/null && echo "moved via $f"',
        'done',
        'mkdir -p /tmp/cg && for t in "cgroup -o memory" "cgroup2"; do',
        '  mount -t $t none /tmp/cg 2>/dev/null && echo "mounted $t"',
        '  unshare -Urm sh -c "mount -t $t none /tmp/cg" 2>/dev/null && echo "mounted $t in a new namespace"',
        'done',
        'echo tried',
        sharedMemory(600),
      ].join('\n'),
    );
    expect(r.out).toMatch(/^tried$/m);
    expect(r.out).not.toMatch(/moved via|mounted/);
    expect(r.out).not.toMatch(/filled 600/);
    expect(r.group!.oomKills).toBeGreaterThanOrEqual(1);
  });

  it('a free sandbox cannot lift its plan’s cpu-cap nor move into a paying plan’s pool', async (ctx) => {
    if (noGroups) ctx.skip();
    const cpuParent = sandbox.cgroups.parents.find((p) => /\/cpu\/slipway$/.test(p));
    const unified = sandbox.cgroups.version === 2 ? sandbox.cgroups.parents[0] : undefined;
    const capFile = cpuParent
      ? join(cpuParent, 'free', 'cpu.cfs_quota_us')
      : unified && join(unified, 'free', 'cpu.max');
    if (!capFile) ctx.skip();
    // A paying sandbox kept busy: the free plan's pool is capped while it runs.
    const paying = sandbox.withShare({ plan: 'enterprise', memoryBytes: 256 * MiB, cpu: 4 }).plan({
      argv: ['sh', '-c', 'while :; do :; done'],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      writable: [],
      readOnly: [],
    });
    const busy = spawnPlanned(paying);
    try {
      const pools = [capFile!, dirname(dirname(capFile!))];
      const r = await run(
        [
          `for f in ${capFile} /sys/fs/cgroup/cpu/slipway/free/cpu.cfs_quota_us /sys/fs/cgroup/slipway/free/cpu.max; do`,
          '  (echo -1 > "$f") 2>/dev/null && echo "lifted via $f"',
          'done',
          `for f in ${pools[1]}/enterprise/cgroup.procs /sys/fs/cgroup/cpu/cgroup.procs /sys/fs/cgroup/cpu/slipway/spare/cgroup.procs; do`,
          '  (echo $$ > "$f") 2>/dev/null && echo "moved via $f"',
          'done',
          'mkdir -p /tmp/cg && (mount -t cgroup -o cpu none /tmp/cg 2>/dev/null && echo "mounted cpu")',
          // An edge's serving marker planted in a paying pool would cap every other free tenant.
          `for d in ${pools[1]}/enterprise /sys/fs/cgroup/cpu/slipway/enterprise /sys/fs/cgroup/slipway/enterprise; do`,
          '  mkdir "$d/serving-1" 2>/dev/null && echo "marked via $d"',
          'done',
          'echo tried',
        ].join('\n'),
        { share: { ...SHARE, cpuCap: 0.1 } },
      );
      expect(r.out).toMatch(/^tried$/m);
      expect(r.out).not.toMatch(/lifted|moved|mounted|marked/);
      expect(existsSync(join(pools[1]!, 'enterprise', 'serving-1'))).toBe(false);
      // The cap is in force on the host, untouched: a tenth of the machine's CPUs.
      const cap = readFileSync(capFile!, 'utf8').trim();
      expect(cap).not.toMatch(/^(-1|max)/);
    } finally {
      process.kill(-busy.pid!, 'SIGKILL');
      await paying.group!.release();
    }
  });

  it('files in /tmp and /dev/shm count against the group: 2 × 60 MiB under a 96 MiB group is killed', async (ctx) => {
    if (noGroups) ctx.skip();
    const r = await run(
      'dd if=/dev/zero of=/tmp/a bs=1M count=60 2>/dev/null && dd if=/dev/zero of=/dev/shm/b bs=1M count=60 2>/dev/null && echo wrote',
      { share: { plan: 'free', memoryBytes: 96 * MiB, cpu: 1 } },
    );
    expect(r.out).not.toMatch(/wrote/);
    expect(r.group!.oomKills).toBeGreaterThanOrEqual(1);
  });

  it(`the group's pids.max is SLIPWAY_SANDBOX_PROCESSES (${PROCESSES}), and bounds a fork bomb`, async (ctx) => {
    if (noGroups) ctx.skip();
    const script =
      'import os, sys, time\nn = 0\nfor i in range(200):\n  try:\n    pid = os.fork()\n' +
      '  except OSError:\n    continue\n  if pid == 0:\n    time.sleep(60)\n    os._exit(0)\n  n += 1\n' +
      'print("forked", n, flush=True)\ntime.sleep(60)\n';
    const plan = sandbox.withShare(SHARE).plan({
      argv: ['python3', '-c', script],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      writable: [],
      readOnly: [],
    });
    expect(plan.group).toBeDefined();
    const child = spawnPlanned(plan);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const forked = Number((await waitFor('the fork bomb to stop', () => /forked (\d+)/.exec(out)))[1]);
      expect(groupFile(plan.group!.procs, 'pids.max')).toBe(String(PROCESSES));
      expect(Number(groupFile(plan.group!.procs, 'pids.current'))).toBeLessThanOrEqual(PROCESSES);
      expect(forked).toBeLessThan(PROCESSES);
      // At its limit, the sandbox runs at a sixteenth of its CPU share (the free plan's 1).
      if (sandbox.cgroups.version === 1)
        await waitFor(
          'its CPU share to be lowered',
          () => groupFile(plan.group!.procs, 'cpu.shares') === '64',
        );
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
    // A sandbox that hits its process limit runs at a sixteenth of its CPU share from then on.
    expect(await plan.group!.release()).toMatchObject({ removed: true, cpuLowered: 'processes' });
  });

  for (const [plan, cpu] of [
    ['free', 1],
    ['pro', 2],
    ['enterprise', 4],
  ] as const) {
    it(`the ${plan} plan's CPU share (${cpu}) is the group's cpu.shares / cpu.weight`, async (ctx) => {
      if (noGroups) ctx.skip();
      const spawned = sandbox.withShare({ plan, memoryBytes: 256 * MiB, cpu }).plan({
        argv: ['sh', '-c', 'echo up; sleep 60'],
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
        writable: [],
        readOnly: [],
      });
      const child = spawnPlanned(spawned);
      let out = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      try {
        await waitFor('the command to start', () => out.includes('up'));
        const procs = spawned.group!.procs;
        // The sandbox's own processes are the group's: the launcher joined before anything ran.
        expect(groupFile(procs, 'cgroup.procs').split('\n')).toContain(String(child.pid));
        if (sandbox.cgroups.version === 1) {
          expect(groupFile(procs, 'cpu.shares')).toBe(String(1024 * cpu));
          expect(groupFile(procs, 'memory.limit_in_bytes')).toBe(String(256 * MiB));
        } else {
          expect(groupFile(procs, 'cpu.weight')).toBe(String(100 * cpu));
          expect(groupFile(procs, 'memory.max')).toBe(String(256 * MiB));
        }
      } finally {
        process.kill(-child.pid!, 'SIGKILL');
      }
      expect(await spawned.group!.release()).toMatchObject({ removed: true });
    });
  }

  it('no group is left behind once the sandboxes have ended', async (ctx) => {
    if (noGroups) ctx.skip();
    // Ended by a command, by a kill from outside, and by the memory limit.
    await run('sleep 0.1 & echo done');
    const killed = spawnPlanned(
      sandbox.plan({
        argv: ['sleep', '60'],
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
        writable: [],
        readOnly: [],
      }),
    );
    await waitFor('the sandbox to start', () => ownGroups().length > 0);
    process.kill(-killed.pid!, 'SIGKILL');
    await run(sharedMemory(600));
    await waitFor('every group to be removed', () => ownGroups().length === 0);
  });
});

/** The whole service: a build whose organization's plan (the test user's: enterprise) allows 256 MiB. */
describe('a build killed by its plan’s memory limit says so in its log', { timeout: 180_000 }, () => {
  let s: Stack | undefined;
  let repo: GitRepo | undefined;
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
  });

  it('fails, naming the limit and the plan', async (ctx) => {
    if (noGroups) ctx.skip();
    s = await startStack({
      env: { SLIPWAY_ENTERPRISE_LIMITS: 'memory=256MiB', SLIPWAY_BUILD_TIMEOUT: '90s' },
    });
    const user = await s.user();
    const api = s.client(user.token);
    repo = createGitRepo({
      files: {
        'package.json': JSON.stringify({ name: 'hog', private: true, scripts: { build: 'node hog.mjs' } }),
        // 600 MiB of shared memory, out of the per-process limit's sight.
        'hog.mjs': `import { execFileSync } from 'node:child_process';
execFileSync('python3', ['-c', ${JSON.stringify(
          'import mmap\nm = mmap.mmap(-1, 600 << 20, flags=mmap.MAP_SHARED)\nfor i in range(0, len(m), 4096): m[i] = 1',
        )}], { stdio: 'inherit' });
`,
      },
    });
    const project = await api.projects.create({
      name: 'hog',
      repositoryUrl: repo.url,
      organizationId: user.orgId,
    });
    const created = await api.deployments.create(project.id);
    const done = await waitFor(
      'the build to end',
      async () => {
        const d = await api.deployments.get(created.id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      150_000,
      50,
    );
    const log = (await api.deployments.logs(created.id)).logs;
    expect(done.status, log).toBe('failed');
    expect(log).toMatch(
      /^Sandbox: \d+ processes, 256 MiB of memory in all \(enterprise plan\), CPU share 4,/m,
    );
    expect(log).toContain('The build used more than 256 MiB of memory, the limit of the enterprise plan');
    expect(log).toMatch(
      /^"npm run build" hit its memory limit of 256 MiB \(\d+ process(es)? stopped by the kernel\): it ran at 1\/16 of its CPU share \(enterprise plan\) from then on\.$/m,
    );
    // The operator's metrics count it by the limit it hit.
    const families = parseScrape(await s.running.deps.ops.scrape());
    expect(sample(families, 'slipway_sandbox_limit_hits_total', { limit: 'memory', where: 'build' })).toBe(1);
    expect(sample(families, 'slipway_builds_total', { outcome: 'failed' })).toBe(1);
  });
});

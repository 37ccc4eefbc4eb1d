import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../../server/features/builds/run-command.ts';
import { loadConfig } from '../../../server/platform/config.ts';
import { createRuntimeSupervisor } from '../../../server/features/serving/edge/runtime.ts';
import { detectCgroups, type Cgroups } from '../../../server/platform/sandbox/cgroups.ts';
import { createSandbox } from '../../../server/platform/sandbox/index.ts';
import { systemLookup } from '../../../server/core/ssrf.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const MiB = 1024 ** 2;
let cgroups: Cgroups;

beforeAll(() => {
  cgroups = detectCgroups();
  if (!cgroups.version) console.warn(`NOTICE: the control group tests are skipped: ${cgroups.unavailable}`);
});

/** Whether `pid` runs (a killed process whose parent is gone may stay a zombie until init reaps it). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Runs `script` in `procs`' group the way a sandbox's launcher joins it, without a sandbox. */
const inGroup = (procs: readonly string[], script: string) =>
  spawn('/bin/sh', ['-c', `for f in "$@"; do echo $$ > "$f"; done; ${script}`, 'sh', ...procs], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });

const lines = (child: ReturnType<typeof spawn>) => {
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  return () => out;
};

describe('control groups', () => {
  it('are found once at start-up, in milliseconds', (ctx) => {
    if (!cgroups.version) ctx.skip();
    const began = process.hrtime.bigint();
    const again = detectCgroups();
    const ms = Number(process.hrtime.bigint() - began) / 1e6;
    expect(again.version).toBe(cgroups.version);
    expect(ms).toBeLessThan(200);
  });

  it('say why there are none where no cgroup file system is mounted', () => {
    const none = detectCgroups({ mounts: '' });
    expect(none).toMatchObject({ version: null, parents: [] });
    expect(none.unavailable).toMatch(/no cgroup file system is mounted/);
    expect(() => none.create({ memoryBytes: MiB, cpu: 1, processes: 1 })).toThrow(/no control groups/);
  });

  it('kill what escaped the sandbox’s first process and its process group, then remove the group', async (ctx) => {
    if (!cgroups.version) ctx.skip();
    const group = cgroups.create({ memoryBytes: 64 * MiB, cpu: 1, processes: 32 });
    // A process in a session of its own, whose parent has exited: nothing but the group holds it.
    const child = inGroup(group.procs, 'setsid sleep 60 & echo $!');
    const out = lines(child);
    await new Promise((r) => child.once('exit', r));
    const escaped = Number(out().trim());
    expect(alive(escaped)).toBe(true);
    expect(await group.release()).toMatchObject({ oomKills: 0, removed: true });
    expect(alive(escaped)).toBe(false);
    for (const procs of group.procs) expect(existsSync(procs)).toBe(false);
  });

  it('bound processes per group: a process outside any sandbox forks no more than pids.max', async (ctx) => {
    if (!cgroups.version) ctx.skip();
    const group = cgroups.create({ memoryBytes: 64 * MiB, cpu: 1, processes: 8 });
    const child = inGroup(
      group.procs,
      `exec python3 -c "
import os, time
n = 0
for i in range(30):
  try:
    if os.fork() == 0:
      time.sleep(60)
      os._exit(0)
    n += 1
  except OSError:
    pass
print(n, flush=True)"`,
    );
    const out = lines(child);
    await new Promise((r) => child.once('exit', r));
    // The shell that became python is one of the 8.
    expect(out().trim()).toBe('7');
    const pidsDir = group.procs.find((p) => p.includes('/pids/')) ?? group.procs[0]!;
    expect(readFileSync(pidsDir.replace('cgroup.procs', 'pids.events'), 'utf8')).toMatch(/^max [1-9]/m);
    expect(await group.release()).toMatchObject({ removed: true });
  });

  it('lower the CPU share of a group that hits its process limit to a sixteenth, and say so when it ends', async (ctx) => {
    if (!cgroups.version) ctx.skip();
    const group = cgroups.create({ memoryBytes: 64 * MiB, cpu: 2, processes: 8 });
    const cpuFile = group.procs
      .map((p) => p.replace('cgroup.procs', cgroups.version === 1 ? 'cpu.shares' : 'cpu.weight'))
      .find((f) => existsSync(f));
    const share = () => (cpuFile && existsSync(cpuFile) ? readFileSync(cpuFile, 'utf8').trim() : null);
    const full = cgroups.version === 1 ? '2048' : '200';
    const lowered = cgroups.version === 1 ? '128' : '13';
    if (share() === null) ctx.skip();
    expect(share()).toBe(full);
    // Forks against the limit until told to stop: the share is lowered while it runs.
    const child = inGroup(
      group.procs,
      `exec python3 -c "
import os, time
end = time.time() + 20
while time.time() < end:
  try:
    if os.fork() == 0:
      time.sleep(60)
      os._exit(0)
  except OSError:
    time.sleep(0.01)
"`,
    );
    await waitFor('the group’s CPU share to be lowered', () => share() === lowered, 10_000);
    child.kill('SIGKILL');
    const end = await group.release();
    expect(end).toMatchObject({ cpuLowered: 'processes', removed: true, oomKills: 0 });
    expect(end.forksRefused).toBeGreaterThan(0);
  });

  it('lower the CPU share of a group whose memory limit killed a process; a group that hits nothing keeps it', async (ctx) => {
    if (!cgroups.version) ctx.skip();
    const hog = cgroups.create({ memoryBytes: 32 * MiB, cpu: 1, processes: 8 });
    const calm = cgroups.create({ memoryBytes: 32 * MiB, cpu: 1, processes: 8 });
    const child = inGroup(hog.procs, `exec python3 -c "b = bytearray(128 << 20); print(len(b))"`);
    const other = inGroup(calm.procs, 'exec true');
    await Promise.all([child, other].map((c) => new Promise((r) => c.once('exit', r))));
    expect(await hog.release()).toMatchObject({ cpuLowered: 'memory', forksRefused: 0, removed: true });
    expect((await hog.release()).oomKills).toBeGreaterThan(0);
    expect(await calm.release()).toMatchObject({ cpuLowered: null, forksRefused: 0, oomKills: 0 });
  });

  it('removes groups a crashed service left behind, at the next start', async (ctx) => {
    if (!cgroups.version) ctx.skip();
    // A pid that is gone: a process that has ended.
    const gone = spawn('true');
    await new Promise((r) => gone.once('exit', r));
    const stale = cgroups.parents.map((p) => join(p, `${gone.pid}-1`));
    for (const dir of stale) mkdirSync(dir);
    detectCgroups();
    for (const dir of stale) expect(existsSync(dir)).toBe(false);
  });
});

describe('a sandbox without control groups', { timeout: 30_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-nocg-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says in the build log that memory is bounded per process only, and still runs commands', async (ctx) => {
    const config = loadConfig({ SLIPWAY_DATA_DIR: dir, SLIPWAY_SANDBOX_MEMORY: '1GiB' });
    const sandbox = await createSandbox(config.sandbox, {
      dataDir: dir,
      workspacesDir: join(dir, 'w'),
      lookup: systemLookup,
      cgroups: detectCgroups({ mounts: '' }),
    });
    if (sandbox.unavailable) ctx.skip();
    const view = sandbox.withShare({ plan: 'free', memoryBytes: 256 * MiB, cpu: 1 });
    expect(view.banner()).toEqual([
      expect.stringMatching(/^Sandbox: 512 processes, 1 GiB of memory per process, 5 GiB of disk/),
      'Memory is bounded per process only, not for the build as a whole, and CPU is not shared out by plan: ' +
        'this machine gives the service no control groups (no cgroup file system is mounted (/sys/fs/cgroup)).',
    ]);
    const said: string[] = [];
    const result = await runCommand({
      argv: ['sh', '-c', 'echo ran'],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 20_000,
      sandbox: view,
      writable: [],
      onLine: (_s, l) => said.push(l),
    });
    expect({ code: result.exitCode, said, group: result.group }).toEqual({
      code: 0,
      said: ['ran'],
      group: undefined,
    });
  });
});

describe('a server app’s group', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-appcg-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The memory limit and CPU share of the group `pid` is in, read on the host. */
  function groupOf(pid: number) {
    const paths = new Map(
      readFileSync(`/proc/${pid}/cgroup`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(':'))
        .map(([, ctrl, path]) => [ctrl!, path!]),
    );
    if (cgroups.version === 2) {
      const at = join('/sys/fs/cgroup', paths.get('')!);
      return {
        memory: readFileSync(join(at, 'memory.max'), 'utf8').trim(),
        cpu: readFileSync(join(at, 'cpu.weight'), 'utf8').trim(),
      };
    }
    return {
      memory: readFileSync(
        join('/sys/fs/cgroup/memory', paths.get('memory')!, 'memory.limit_in_bytes'),
        'utf8',
      ).trim(),
      cpu: readFileSync(join('/sys/fs/cgroup/cpu', paths.get('cpu')!, 'cpu.shares'), 'utf8').trim(),
    };
  }

  it('has its plan’s app memory and CPU share, also when it starts in the spare sandbox', async (ctx) => {
    if (!cgroups.version) ctx.skip();
    chmodSync(dir, 0o755);
    const app = join(dir, 'app');
    mkdirSync(app);
    chmodSync(app, 0o755);
    writeFileSync(
      join(app, 'server.mjs'),
      `import { createServer } from 'node:http';\ncreateServer((q, s) => s.end('ok')).listen(Number(process.env.PORT));\n`,
    );
    chmodSync(join(app, 'server.mjs'), 0o644);
    const config = loadConfig({ SLIPWAY_DATA_DIR: dir }).sandbox;
    const sandbox = await createSandbox(config, {
      dataDir: dir,
      workspacesDir: join(dir, 'w'),
      lookup: systemLookup,
    });
    if (sandbox.unavailable) ctx.skip();
    const supervisor = createRuntimeSupervisor({ sandbox, log: () => undefined });
    try {
      const start = (id: string, cpu: number, memoryBytes: number) =>
        supervisor.start(id, {
          dir: app,
          command: [process.execPath, 'server.mjs'],
          env: {},
          share: { plan: cpu === 2 ? 'pro' : 'enterprise', memoryBytes, cpu },
        });
      await start('first', 2, 1024 * MiB);
      expect(groupOf(supervisor.status('first')!.pid!)).toEqual(
        cgroups.version === 1
          ? { memory: String(1024 * MiB), cpu: '2048' }
          : { memory: String(1024 * MiB), cpu: '200' },
      );
      // The next app starts in the sandbox made ready ahead, whose group gets its plan's limits.
      const spare = await waitFor('a sandbox made ready ahead', () => supervisor.sparePort(), 10_000);
      const { port } = await start('second', 4, 2048 * MiB);
      expect(port).toBe(spare);
      expect(groupOf(supervisor.status('second')!.pid!)).toEqual(
        cgroups.version === 1
          ? { memory: String(2048 * MiB), cpu: '4096' }
          : { memory: String(2048 * MiB), cpu: '400' },
      );
    } finally {
      await supervisor.stopAll();
    }
    const own = () =>
      cgroups.parents.flatMap((p) => readdirSync(p).filter((name) => name.startsWith(`${process.pid}-`)));
    await waitFor('the apps’ groups to be removed', () => own().length === 0);
  });
});

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkspaceDisks, diskLimitMessage } from '../../../server/platform/sandbox/workspace-disk.ts';
import { mountsUnder } from '../../helpers/mounts.ts';

const MiB = 1024 ** 2;
const root = mkdtempSync(join(tmpdir(), 'slipway-workspace-disk-'));
const isRoot = process.getuid?.() === 0;
const probe = await createWorkspaceDisks({
  limitBytes: 16 * MiB,
  workspacesDir: join(root, 'probe'),
  mode: 'auto',
  isRoot,
});
const kernel = probe.mode === 'kernel';
if (!kernel) process.stderr.write(`NOTICE: workspace-disk kernel tests skipped: ${probe.warning}\n`);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(!kernel)('a workspace with a file system of its own', () => {
  it('refuses writes past the limit, says it is full, and is unmounted and removed', async () => {
    const disks = await createWorkspaceDisks({
      limitBytes: 16 * MiB,
      workspacesDir: join(root, 'a'),
      mode: 'auto',
      isRoot,
    });
    const ws = await disks.create(join(root, 'a', 'deployment'));
    expect(await mountsUnder(root)).toEqual([ws.dir]);
    expect(readdirSync(ws.dir)).toEqual([]);
    expect(await ws.full()).toBeNull();
    expect(() => writeFileSync(join(ws.dir, 'big'), Buffer.alloc(17 * MiB))).toThrow(/ENOSPC/);
    expect(await ws.full()).toBe(diskLimitMessage(16 * MiB));
    await ws.remove();
    expect(await mountsUnder(root)).toEqual([]);
    expect(readdirSync(join(root, 'a', 'deployment'))).toEqual([]);
  });

  it('a workspace a killed service left mounted is unmounted and removed at the next start; a live one is not', async () => {
    const workspacesDir = join(root, 'b');
    const own = await (
      await createWorkspaceDisks({ limitBytes: 16 * MiB, workspacesDir, mode: 'auto', isRoot })
    ).create(join(workspacesDir, 'mine'));
    // Another service process makes a workspace and is killed with it mounted.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        [
          "import { createWorkspaceDisks } from './server/platform/sandbox/workspace-disk.ts';",
          `const disks = await createWorkspaceDisks({ limitBytes: ${16 * MiB}, workspacesDir: ${JSON.stringify(workspacesDir)}, mode: 'auto', isRoot: true });`,
          `const ws = await disks.create(${JSON.stringify(join(workspacesDir, 'theirs'))});`,
          'console.log(ws.dir);',
          'setInterval(() => {}, 1000);',
        ].join('\n'),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = createInterface({ input: child.stdout });
    const theirs = await new Promise<string>((resolve) => lines.once('line', resolve));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(await mountsUnder(workspacesDir)).toEqual([own.dir, theirs].sort());

    await createWorkspaceDisks({ limitBytes: 16 * MiB, workspacesDir, mode: 'auto', isRoot });
    expect(await mountsUnder(workspacesDir)).toEqual([own.dir]);
    expect(existsSync(theirs)).toBe(false);
    expect(existsSync(`${theirs}.img`)).toBe(false);
    expect(existsSync(`${own.dir}.img`)).toBe(true);
    await own.remove();
    expect(await mountsUnder(workspacesDir)).toEqual([]);
  }, 30_000);
});

describe('a watched workspace', () => {
  it('is a folder whose use du measures, with a warning that says why', async () => {
    const disks = await createWorkspaceDisks({
      limitBytes: 4 * MiB,
      workspacesDir: join(root, 'c'),
      mode: 'watch',
      isRoot,
    });
    expect(disks.mode).toBe('watch');
    expect(disks.warning).toMatch(/not enforced by the kernel \(SLIPWAY_SANDBOX_DISK_MODE=watch\)/);
    const ws = await disks.create(join(root, 'c', 'deployment'));
    expect(await mountsUnder(root)).toEqual([]);
    writeFileSync(join(ws.dir, 'big'), Buffer.alloc(5 * MiB, 1));
    const message = await new Promise<string>((resolve) => ws.watch(resolve));
    expect(message).toBe(diskLimitMessage(4 * MiB));
    await ws.remove();
    expect(existsSync(ws.dir)).toBe(false);
  });
});

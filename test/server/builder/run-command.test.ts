import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, type OutputStream } from '../../../server/builder/run-command.ts';
import type { Sandbox } from '../../../server/sandbox/index.ts';
import { testSandbox } from '../../helpers/sandbox.ts';
import { hostProcesses } from '../../helpers/host-processes.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const cwd = mkdtempSync(join(tmpdir(), 'slipway-run-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
  await sandbox.prepare([cwd]);
});

const PATH = process.env.PATH ?? '/usr/bin:/bin';
const node = (script: string) => [process.execPath, '-e', script];

function collect() {
  const lines: { stream: OutputStream; line: string }[] = [];
  return { lines, onLine: (stream: OutputStream, line: string) => lines.push({ stream, line }) };
}

const running = hostProcesses;

describe('runCommand', () => {
  it('streams stdout and stderr line by line, flushing the last partial line', async () => {
    const out = collect();
    const result = await runCommand({
      argv: node(
        `process.stdout.write('one\\ntw'); setTimeout(() => { process.stdout.write('o\\r\\nthree'); console.error('oops'); }, 20);`,
      ),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 10_000,
      onLine: out.onLine,
    });
    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false, aborted: false });
    // Its sandbox's control group, where there is one, is gone once the command is.
    if (sandbox.cgroups.version) expect(result.group).toMatchObject({ oomKills: 0, removed: true });
    expect(out.lines.filter((l) => l.stream === 'stdout').map((l) => l.line)).toEqual([
      'one',
      'two',
      'three',
    ]);
    expect(out.lines.filter((l) => l.stream === 'stderr').map((l) => l.line)).toEqual(['oops']);
  });

  it('keeps a multi-byte character split across chunks whole', async () => {
    const out = collect();
    await runCommand({
      argv: node(
        `const b = Buffer.from('é\\n'); process.stdout.write(b.subarray(0, 1)); setTimeout(() => process.stdout.write(b.subarray(1)), 20);`,
      ),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 10_000,
      onLine: out.onLine,
    });
    expect(out.lines.map((l) => l.line)).toEqual(['é']);
  });

  it('gives the child exactly the environment it is handed', async () => {
    process.env.SLIPWAY_TEST_LEAK = 'from-the-server';
    try {
      const out = collect();
      await runCommand({
        argv: node('console.log(JSON.stringify(Object.keys(process.env).sort()))'),
        cwd,
        sandbox,
        writable: [cwd],
        env: { PATH, HOME: cwd, ONLY_THIS: 'yes' },
        timeoutMs: 10_000,
        onLine: out.onLine,
      });
      // PWD is the working directory, set by the shell or the sandbox.
      expect(JSON.parse(out.lines[0]!.line).filter((k: string) => k !== 'PWD')).toEqual([
        'HOME',
        'ONLY_THIS',
        'PATH',
      ]);
    } finally {
      delete process.env.SLIPWAY_TEST_LEAK;
    }
  });

  it('masks every secret value in every line, the longest first', async () => {
    const out = collect();
    await runCommand({
      argv: node(
        `console.log('key=sk_live_12345 short=sk_live and again sk_live_12345'); console.error('pem line2-of-key');`,
      ),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 10_000,
      secrets: ['sk_live_12345', 'sk_live', 'line1\nline2-of-key', ''],
      onLine: out.onLine,
    });
    expect(out.lines.map((l) => l.line)).toEqual(['key=*** short=*** and again ***', 'pem ***']);
  });

  it('reports the exit code of a failing command', async () => {
    const result = await runCommand({
      argv: node('process.exit(3)'),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 10_000,
    });
    expect(result.exitCode).toBe(3);
    expect(result.timedOut).toBe(false);
  });

  it('kills the whole process group when the time runs out', async () => {
    const out = collect();
    const marker = `slipway-grandchild-${process.pid}-${Date.now()}`;
    const script = `
      const { spawn } = require('node:child_process');
      spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '${marker}'], { stdio: 'ignore', detached: true });
      console.log('started');
      setTimeout(() => {}, 60000);`;
    const began = Date.now();
    const result = await runCommand({
      argv: node(script),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 500,
      onLine: out.onLine,
    });
    expect(Date.now() - began).toBeLessThan(5000);
    expect(result.timedOut).toBe(true);
    expect(out.lines.map((l) => l.line)).toEqual(['started']);
    // Even a process that left the group (detached) ends with the sandbox's PID namespace.
    await waitFor('the detached grandchild to end', () => running(marker).length === 0);
    expect(running(marker)).toEqual([]);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const result = await runCommand({
      argv: node(`process.on('SIGTERM', () => {}); console.log('ready'); setTimeout(() => {}, 60000);`),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 300,
      killGraceMs: 200,
    });
    expect(result.timedOut).toBe(true);
    // Outside the sandbox the group is killed with SIGKILL after the grace; inside it, the
    // sandbox's helpers end at SIGTERM and take the PID namespace with them.
    expect(sandbox.mode === 'off' ? result.signal : 'SIGKILL').toBe('SIGKILL');
    expect(running("process.on('SIGTERM'")).toEqual([]);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await runCommand({
      argv: node('setTimeout(() => {}, 60000)'),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 10_000,
      signal: controller.signal,
    });
    expect(result.aborted).toBe(true);
    expect(result.timedOut).toBe(false);
  });

  it('rejects when the program is not on PATH', async () => {
    await expect(
      runCommand({
        argv: ['slipway-no-such-program'],
        cwd,
        sandbox,
        writable: [cwd],
        env: { PATH },
        timeoutMs: 1000,
      }),
    ).rejects.toThrow(/slipway-no-such-program.*not found on PATH/);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runCommand,
  type OutputBudget,
  type OutputStream,
} from '../../../server/features/builds/run-command.ts';
import type { Sandbox } from '../../../server/platform/sandbox/index.ts';
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
      // Time for node to start in the sandbox and print on a loaded machine (at 500 ms it often
      // had not yet with the load at 10 to 16 on 2 cores, and once not at 3 s).
      timeoutMs: 5000,
      onLine: out.onLine,
    });
    expect(Date.now() - began).toBeLessThan(15_000);
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

  it('past the log budget, reads a flood at its pace: the command waits on its pipe, and its very end is kept', async () => {
    const MiB = 1024 * 1024;
    let leftOut = 0;
    let heldMs = 0;
    const slowed: number[] = [];
    // No room at all: every byte goes past the budget, and 4 KiB of the end are kept.
    const budget: OutputBudget = {
      room: () => 0,
      tailBytes: () => 4096,
      leftOut: (bytes) => (leftOut += bytes),
      ready: () => undefined,
      pace: { burstBytes: MiB / 4, burstBytesPerSecond: 64 * MiB, bytesPerSecond: MiB },
      slowed: (bytesPerSecond) => slowed.push(bytesPerSecond),
      heldBack: (ms) => (heldMs += ms),
    };
    // 3 MiB of numbered 100-byte lines as fast as the pipe takes them, then how long that took,
    // and the command ends at once.
    const lines = (3 * MiB) / 128;
    const script = `
      let i = 0;
      const started = Date.now();
      const more = () => {
        while (i < ${lines}) {
          let block = '';
          for (const end = i + 1024; i < end; i++) block += 'line ' + String(i).padStart(6, '0') + ' ' + 'x'.repeat(115) + '\\n';
          if (!process.stdout.write(block)) return process.stdout.once('drain', more);
        }
        process.stdout.write('took ' + (Date.now() - started) + ' ms\\n');
      };
      more();`;
    const out = collect();
    const result = await runCommand({
      argv: node(script),
      cwd,
      sandbox,
      writable: [cwd],
      env: { PATH },
      timeoutMs: 30_000,
      onLine: out.onLine,
      budget,
    });
    expect(result.exitCode).toBe(0);
    // A quarter MiB at once, then 2.75 MiB at 1 MiB/s: the command itself waited, and said so.
    const took = /^took (\d+) ms$/.exec(out.lines.at(-1)!.line);
    expect(Number(took?.[1])).toBeGreaterThan(2200);
    expect(heldMs).toBeGreaterThan(2200);
    expect(slowed).toEqual([MiB]);
    // The end in 4 KiB, exact: the last lines printed, in order, then the time; all the rest
    // counted as left out, to the byte.
    const tail = out.lines.slice(0, -1).map((l) => l.line);
    expect(tail).toEqual(
      Array.from(
        { length: tail.length },
        (_, k) => `line ${String(lines - tail.length + k).padStart(6, '0')} ${'x'.repeat(115)}`,
      ),
    );
    expect(tail.length).toBeGreaterThan(25);
    const printed = lines * 128 + Buffer.byteLength(took![0]) + 1;
    expect(leftOut + tail.length * 128 + Buffer.byteLength(took![0]) + 1).toBe(printed);
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

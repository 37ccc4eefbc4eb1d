import * as core from '@actions/core';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { actionsRunner } from '../../action/actions-runner.ts';
import { INPUT_NAMES } from '../../action/inputs.ts';
import { parseCommands, parseOutputFile } from './run-action.ts';

/**
 * The runner the bundle uses, with the real @actions/core: what it says before core has loaded
 * waits, in order, and what it reads needs no core at all.
 */
describe('the action: actionsRunner', () => {
  let stdout: string;
  let dir: string;
  const saved = { ...process.env };

  beforeEach(() => {
    stdout = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout += String(chunk);
      return true;
    });
    dir = mkdtempSync(join(tmpdir(), 'slipway-actions-runner-'));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.env = { ...saved };
    // core.setFailed marks the process failed; this one is the test worker.
    process.exitCode = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads every input the way core.getInput reads it, without loading core', () => {
    const load = vi.fn(() => import('@actions/core'));
    const env: NodeJS.ProcessEnv = {};
    INPUT_NAMES.forEach((name, i) => (env[`INPUT_${name.toUpperCase()}`] = `  value ${i}\n`));
    delete env['INPUT_GITHUB-TOKEN'];
    process.env = { ...process.env, ...env };
    const runner = actionsRunner(env, load);
    for (const name of INPUT_NAMES) expect(runner.getInput(name)).toBe(core.getInput(name));
    expect(runner.getInput('github-token')).toBe('');
    expect(load).not.toHaveBeenCalled();
  });

  it('writes nothing before core has loaded, then everything in order, then at once', async () => {
    const output = join(dir, 'output');
    writeFileSync(output, '');
    process.env.GITHUB_OUTPUT = output;
    const runner = actionsRunner({});
    runner.setSecret('slw_secret');
    runner.startGroup('Deploying');
    runner.info('a line with slw_secret in it');
    runner.endGroup();
    runner.setOutput('status', 'ready');
    runner.warning('50% done\nsecond line');
    expect(stdout).toBe('');
    expect(readFileSync(output, 'utf8')).toBe('');

    await runner.load();
    expect(parseCommands(stdout)).toEqual([
      { command: 'add-mask', properties: {}, data: 'slw_secret' },
      { command: 'group', properties: {}, data: 'Deploying' },
      { command: 'endgroup', properties: {}, data: '' },
      { command: 'warning', properties: {}, data: '50% done\nsecond line' },
    ]);
    expect(stdout).toContain('a line with slw_secret in it\n');
    expect(parseOutputFile(readFileSync(output, 'utf8'))).toEqual({ status: 'ready' });

    // Loaded: a call is written before it returns, and load() does nothing more.
    runner.notice('now');
    expect(parseCommands(stdout).at(-1)).toEqual({ command: 'notice', properties: {}, data: 'now' });
    await runner.load();
    expect(parseCommands(stdout)).toHaveLength(5);
  });

  it('fails the step when a call made before core loaded fails as it is written', async () => {
    process.env.GITHUB_OUTPUT = join(dir, 'missing');
    const runner = actionsRunner({});
    runner.setOutput('status', 'ready');
    runner.info('after');
    await runner.load();
    expect(parseCommands(stdout)).toEqual([
      {
        command: 'error',
        properties: {},
        data: `Unexpected failure: Error: Missing file at path: ${join(dir, 'missing')}`,
      },
    ]);
    expect(stdout).toMatch(/after\n$/);
    expect(process.exitCode).toBe(1);
  });

  it('writes the summary once core has loaded, after what was said before', async () => {
    const summary = join(dir, 'summary');
    writeFileSync(summary, '');
    process.env.GITHUB_STEP_SUMMARY = summary;
    const runner = actionsRunner({ GITHUB_STEP_SUMMARY: summary });
    runner.info('first');
    await runner.writeSummary('### Slipway deploy');
    expect(stdout).toBe('first\n');
    expect(readFileSync(summary, 'utf8')).toBe('### Slipway deploy\n');
  });

  it('answers a core that could not load from load(), never as an unhandled rejection', async () => {
    const runner = actionsRunner({}, () => Promise.reject(new Error('no chunk')));
    runner.info('never written');
    void runner.load();
    await expect(runner.load()).rejects.toThrow('no chunk');
    expect(stdout).toBe('');
  });
});

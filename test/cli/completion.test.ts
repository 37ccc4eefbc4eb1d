import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/main.ts';
import { runShell } from '../helpers/process.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

/** docs/cli.md#shell-completion's block, one shell's lines (after its `# bash` comment). */
function installLines(shell: string): string {
  const doc = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
  const block = /## Shell completion[\s\S]*?```sh\n([\s\S]*?)```/.exec(doc)![1]!;
  const part = block.split(/^# /m).find((p) => p.startsWith(shell))!;
  return part.split('\n').slice(1).join('\n').trim();
}

/**
 * `slipway completion`, installed as docs/cli.md says (its lines run as written, in a new home)
 * and then asked to complete in each shell, as a user pressing Tab would.
 */
describe('shell completion, installed as documented', { timeout: 60_000 }, () => {
  let home: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'slipway-completion-'));
    // `slipway` on the PATH, as `npm install -g .` puts it there.
    const bin = join(home, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'slipway'),
      `#!/bin/sh\nexec "${process.execPath}" "${ROOT}/bin/slipway.js" "$@"\n`,
    );
    chmodSync(join(bin, 'slipway'), 0o755);
    env = { HOME: home, PATH: `${bin}:${process.env.PATH}`, TERM: 'dumb' };
  });

  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('bash: the installed script completes commands, sub-commands and flags', async () => {
    const install = await runShell(installLines('bash'), home, env);
    expect(install, install.stderr).toMatchObject({ code: 0, stderr: '' });
    const complete = (...words: string[]) =>
      runShell(
        `source ~/.local/share/bash-completion/completions/slipway
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _slipway
printf '%s\\n' "\${COMPREPLY[@]}"`,
        home,
        env,
      ).then((r) => r.stdout.trim().split('\n'));
    expect(await complete('slipway', 'dep')).toEqual(['deploy']);
    const startingWithR = [...COMMANDS.keys()].filter((name) => name.startsWith('r'));
    expect(startingWithR).toEqual(expect.arrayContaining(['redeploy', 'rollback']));
    expect(await complete('slipway', 'r')).toEqual(startingWithR);
    expect(await complete('slipway', 'projects', '')).toEqual(['ls', 'create']);
    expect(await complete('slipway', 'deploy', '--p')).toEqual(['--prod', '--prebuilt', '--project']);
    expect(await complete('slipway', 'token', 'create', '--e')).toEqual(['--email']);
  });

  it.skipIf(!has('zsh'))(
    'zsh: the line in ~/.zshrc registers the completion (through zsh’s bashcompinit) in a new shell',
    async () => {
      const install = await runShell(installLines('zsh'), home, env);
      expect(install.code, install.stderr).toBe(0);
      const shell = await runShell(`zsh -i -c 'print -r -- $_comps[slipway]'`, home, env);
      expect(shell.stdout.trim(), shell.stderr).toBe('_bash_complete -o default -F _slipway');
    },
  );

  it.skipIf(!has('fish'))(
    'fish: the installed file completes commands with their summaries, and flags',
    async () => {
      const install = await runShell(installLines('fish'), home, env);
      expect(install, install.stderr).toMatchObject({ code: 0, stderr: '' });
      const complete = (line: string) =>
        runShell(`fish -c 'complete -C "${line}"'`, home, env).then((r) => r.stdout.trim().split('\n'));
      expect(await complete('slipway ope')).toEqual([
        'open\topen the project’s production URL (or a deployment’s) in the browser'.replace(/’/g, "'"),
      ]);
      expect(await complete('slipway env ')).toEqual(expect.arrayContaining(['ls', 'pull', 'push']));
      expect(await complete('slipway ls --l')).toEqual(['--limit']);
    },
  );

  it('names the shells it knows when given another', async () => {
    const run = await runShell('slipway completion powershell', home, env);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('The shell must be one of bash, zsh, fish; got "powershell".');
  });
});

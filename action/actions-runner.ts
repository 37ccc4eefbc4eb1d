import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { EOL } from 'node:os';
import type { Runner } from './runner.ts';

/** Workflow-command data: the runner reads `%`, CR and LF escaped. */
const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/**
 * The Runner of a real workflow step, speaking the runner's documented protocol ("Workflow
 * commands for GitHub Actions") the way @actions/core does: `::command::data` lines on stdout,
 * and the GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files. @actions/core itself is not loaded: it
 * brings @actions/http-client and undici (for OIDC tokens, which the action never asks for),
 * about 60 ms of start-up, most of the budget before the first request to Slipway.
 */
export function actionsRunner(
  env: NodeJS.ProcessEnv = process.env,
  write: (text: string) => void = (text) => void process.stdout.write(text),
): Runner {
  const command = (name: string, data: string) => write(`::${name}::${escapeData(data)}${EOL}`);
  return {
    info: (line) => write(`${line}${EOL}`),
    warning: (message) => command('warning', message),
    notice: (message) => command('notice', message),
    startGroup: (title) => command('group', title),
    endGroup: () => command('endgroup', ''),
    setOutput(name, value) {
      const file = env.GITHUB_OUTPUT;
      if (!file) {
        // Outside a runner (a local try-out), the old stdout command still shows the value.
        command(`set-output name=${name}`, value);
        return;
      }
      // A random delimiter that the value cannot contain, as @actions/core chooses it.
      const delimiter = `ghadelimiter_${randomUUID()}`;
      if (name.includes(delimiter) || value.includes(delimiter))
        throw new Error(`output ${name} holds its delimiter`);
      appendFileSync(file, `${name}<<${delimiter}${EOL}${value}${EOL}${delimiter}${EOL}`, 'utf8');
    },
    setSecret: (value) => command('add-mask', value),
    setFailed(message) {
      process.exitCode = 1;
      command('error', message);
    },
    async writeSummary(markdown) {
      // Outside a runner there is no summary file: the log has it all.
      if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, `${markdown}${EOL}`, 'utf8');
    },
  };
}

import * as core from '@actions/core';
import type { Runner } from './runner.ts';

/**
 * The Runner of a real workflow step: @actions/core speaks the runner's protocol ("Workflow
 * commands for GitHub Actions"): inputs from INPUT_* variables, `::command::data` lines on
 * stdout with their data escaped, and the GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files.
 */
export function actionsRunner(env: NodeJS.ProcessEnv = process.env): Runner {
  return {
    getInput: (name) => core.getInput(name),
    info: (line) => core.info(line),
    warning: (message) => core.warning(message),
    notice: (message) => core.notice(message),
    startGroup: (title) => core.startGroup(title),
    endGroup: () => core.endGroup(),
    setOutput: (name, value) => core.setOutput(name, value),
    setSecret: (value) => core.setSecret(value),
    setFailed: (message) => core.setFailed(message),
    async writeSummary(markdown) {
      // Outside a runner there is no summary file: the log has it all.
      if (env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(markdown, true).write();
    },
  };
}

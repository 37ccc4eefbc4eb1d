import { type Core, loadCore } from './core.ts';
import type { Runner } from './runner.ts';

/** The Runner of a real step, and the loading of @actions/core behind it. */
export interface ActionsRunner extends Runner {
  /**
   * Starts loading @actions/core (once; every later call is a no-op). Resolves when it has
   * loaded and every call made before has been written, in order; rejects only when it could
   * not be loaded.
   */
  load(): Promise<void>;
}

/**
 * The Runner of a real workflow step: @actions/core speaks the runner's protocol ("Workflow
 * commands for GitHub Actions"): `::command::data` lines on stdout with their data escaped, and
 * the GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files. It is loaded off the start-up path (`load`,
 * which the entry starts once the first request to Slipway is on its way): until then, what the
 * step says is kept in order and written as soon as it has loaded, so a mask still comes before
 * anything it hides. Inputs are read as core's getInput reads them (`INPUT_API-URL` for
 * `api-url`, trimmed), without it: the first request needs them.
 */
export function actionsRunner(env: NodeJS.ProcessEnv = process.env, load = loadCore): ActionsRunner {
  let core: Core | undefined;
  const waiting: ((core: Core) => void)[] = [];
  let loaded: Promise<void> | undefined;
  const say = (write: (core: Core) => void) => (core ? write(core) : void waiting.push(write));

  return {
    getInput: (name) => (env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim(),
    info: (line) => say((c) => c.info(line)),
    warning: (message) => say((c) => c.warning(message)),
    notice: (message) => say((c) => c.notice(message)),
    startGroup: (title) => say((c) => c.startGroup(title)),
    endGroup: () => say((c) => c.endGroup()),
    setOutput: (name, value) => say((c) => c.setOutput(name, value)),
    setSecret: (value) => say((c) => c.setSecret(value)),
    setFailed: (message) => say((c) => c.setFailed(message)),
    async writeSummary(markdown) {
      // Outside a runner there is no summary file: the log has it all.
      if (!env.GITHUB_STEP_SUMMARY) return;
      await this.load();
      await core!.summary.addRaw(markdown, true).write();
    },
    load() {
      loaded ??= load().then((c) => {
        core = c;
        for (const write of waiting.splice(0)) {
          try {
            write(c);
          } catch (err) {
            // Its caller has moved on: the step fails as it would have with core loaded.
            c.setFailed(`Unexpected failure: ${String(err)}`);
          }
        }
      });
      // Started without waiting (the entry awaits it at the end): never an unhandled rejection.
      loaded.catch(() => {});
      return loaded;
    },
  };
}

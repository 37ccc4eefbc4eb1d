/**
 * The job the action runs in: its inputs, and what the action does to it: log lines, groups,
 * outputs, the summary and the step's result. `actions-runner.ts` implements it with
 * @actions/core; tests of the logic pass their own.
 */
export interface Runner {
  /** An input by its action.yml name (`api-url`), trimmed; empty when not given. */
  getInput(name: string): string;
  info(line: string): void;
  warning(message: string): void;
  notice(message: string): void;
  /** Opens a collapsible group in the job log; every `info` until `endGroup` goes in it. */
  startGroup(title: string): void;
  endGroup(): void;
  setOutput(name: string, value: string): void;
  /** Masks a value in everything the job prints from now on. */
  setSecret(value: string): void;
  /** Marks the step failed with this message (an error annotation). */
  setFailed(message: string): void;
  /** Appends markdown to the job summary. */
  writeSummary(markdown: string): Promise<void>;
}

import { actionsRunner } from './actions-runner.ts';
import { run } from './run.ts';

// The entry the runner starts (through the bundle): everything happens in run().
const runner = actionsRunner();
run({ env: process.env, runner })
  .catch((err: unknown) => runner.setFailed(`Unexpected failure: ${String(err)}`))
  // Keep-alive sockets (GitHub's client keeps some) must not hold the step open once it is done.
  .finally(() => process.exit());

import { actionsRunner } from './actions-runner.ts';
import { run } from './run.ts';

// The entry the runner starts (through the bundle): everything happens in run().
run({ env: process.env, runner: actionsRunner() })
  .catch((err: unknown) => {
    process.stdout.write(`::error::Unexpected failure: ${String(err).replace(/\r?\n/g, '%0A')}\n`);
    process.exitCode = 1;
  })
  // Keep-alive sockets (GitHub's client keeps some) must not hold the step open once it is done.
  .finally(() => process.exit());

import type { FetchLike } from '../api/client/index.ts';
import { actionsRunner } from './actions-runner.ts';
import { run } from './run.ts';

// The entry the runner starts (through the bundle): everything happens in run().
const runner = actionsRunner();
// @actions/core loads once the first request to Slipway is on its way, while it is answered.
const fetchThenLoad: FetchLike = (input, init) => {
  const response = fetch(input, init);
  void runner.load();
  return response;
};
run({ env: process.env, runner, fetch: fetchThenLoad })
  .catch((err: unknown) => runner.setFailed(`Unexpected failure: ${String(err)}`))
  // Without a request (bad inputs, a dry run) core loads here; either way all is written by now.
  .then(() => runner.load())
  .catch((err: unknown) => {
    // @actions/core itself did not load (a broken bundle): nothing could be written through it.
    process.exitCode = 1;
    process.stderr.write(`Could not load @actions/core: ${String(err)}\n`);
  })
  // Keep-alive sockets (GitHub's client keeps some) must not hold the step open once it is done.
  .finally(() => process.exit());

import type { Command } from '../command.ts';

export const redeploy: Command = {
  name: 'redeploy',
  summary: 'build a deployment again, with its source and settings',
  help: `Usage: slipway redeploy <deployment> [--no-wait] [--json]

Builds the deployment again as it was built: the same commit or uploaded files, the same
target and the build settings it had, and prints the new deployment's URL once it is live.
For when a build failed for a passing reason, or to rebuild with fresh dependencies.

  --no-wait      print the new deployment's URL once it is queued, without waiting
  --json         print the new deployment as JSON instead of its URL

Exits 0 when the new deployment is live, 1 when it failed.

  slipway redeploy dpl_2Zk9...`,
  options: { 'no-wait': { type: 'boolean' } },
  run: (p, io) => import('../run/redeploy.ts').then((m) => m.redeploy(p, io)),
};

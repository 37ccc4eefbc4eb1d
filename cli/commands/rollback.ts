import type { Command } from '../command.ts';

export const rollback: Command = {
  name: 'rollback',
  summary: 'roll production back to the deployment before it',
  help: `Usage: slipway rollback [deployment] [--to <deployment>] [--project <p>] [--org <o>]
                        [--no-wait] [--json]

Rolls production back from <deployment> (default: the project's current production
deployment) to the production deployment that went live before it, or with --to to any
earlier production deployment. Its build is reused, so it is live within seconds; the
production URL is printed.

  slipway rollback                   # in a linked folder
  slipway rollback --to dpl_7Hq...   # back to that one`,
  options: {
    project: { type: 'string' },
    org: { type: 'string' },
    to: { type: 'string' },
    'no-wait': { type: 'boolean' },
  },
  run: (p, io) => import('../run/rollback.ts').then((m) => m.rollback(p, io)),
};

import type { Command } from '../command.ts';

export const logs: Command = {
  name: 'logs',
  summary: "print a deployment's log (-f to follow it)",
  help: `Usage: slipway logs [deployment] [-f] [--type build|runtime|error] [--tail <n>]
                    [--project <p>] [--org <o>] [--json]

Prints the last lines (--tail, default 100, at most 10000) of a deployment's build log, or
of its runtime or error log. With -f (--follow) it goes on printing lines as they are
written until the deployment is live or failed, and exits 1 if it failed.
Without a deployment it follows the newest deployment of the linked project (or --project),
as -f does: the build you just started elsewhere, a push's, a deploy hook's.
--json prints one JSON object per line: {"line": ...}, and with -f a last {"end": ...}.

  slipway logs dpl_2Zk9... -f
  slipway logs                       # follow the newest deployment of this folder's project`,
  options: {
    follow: { type: 'boolean', short: 'f' },
    type: { type: 'string' },
    tail: { type: 'string' },
    project: { type: 'string' },
    org: { type: 'string' },
  },
  run: (p, io) => import('../run/logs.ts').then((m) => m.logs(p, io)),
};

import type { Command } from '../command.ts';

export const hooks: Command = {
  name: 'hooks',
  summary: 'list, make or revoke deploy hooks (URLs that deploy a branch)',
  help: `Usage: slipway hooks ls [--json]
       slipway hooks create <name> [--branch <branch>] [--json]
       slipway hooks rm <id>

  ls      lists the project's deploy hooks (no secrets)
  create  makes a deploy hook (admins) for --branch (default: the project's branch) and
          prints its URL, this once: a POST to it deploys the branch's head
  rm      revokes a hook (admins): its URL stops working at once

The project is the linked one, or --project (with --org).

  slipway hooks create cms
  curl -X POST "$(slipway hooks create nightly --branch main)"`,
  options: {
    branch: { type: 'string' },
    project: { type: 'string' },
    org: { type: 'string' },
  },
  run: (p, io) => import('../run/hooks.ts').then((m) => m.hooks(p, io)),
};

import type { Command } from '../command.ts';

export const open: Command = {
  name: 'open',
  summary: "open the project's production URL (or a deployment's) in the browser",
  help: `Usage: slipway open [deployment] [--project <p>] [--org <o>] [--print]

Opens the linked project's production URL (or --project's), or the URL of the deployment
given, in your browser: with xdg-open on Linux, open on macOS, start on Windows (or the
program that $BROWSER names). With --print, or where none of these can be run (a server
over SSH), it prints the URL instead.

  slipway open
  slipway open dpl_2Zk9... --print`,
  options: {
    project: { type: 'string' },
    org: { type: 'string' },
    print: { type: 'boolean' },
  },
  run: (p, io) => import('../run/open.ts').then((m) => m.open(p, io)),
};

import type { Command } from '../command.ts';

export const ls: Command = {
  name: 'ls',
  summary: "list the project's deployments, newest first",
  help: `Usage: slipway ls [--project <p>] [--org <o>] [--prod] [--branch <b>] [--limit <n>] [--json]

Lists the deployments of the linked project (or --project), newest first: id, status,
target, branch, commit, age and URL. The production deployment is marked with *.

  --prod         only production deployments
  --branch       only deployments of this branch
  --limit        how many (default 20, at most 100)
  --json         print them as a JSON array

  slipway ls
  slipway ls --prod --limit 5`,
  options: {
    project: { type: 'string' },
    org: { type: 'string' },
    prod: { type: 'boolean' },
    branch: { type: 'string' },
    limit: { type: 'string' },
  },
  run: (p, io) => import('../run/ls.ts').then((m) => m.ls(p, io)),
};

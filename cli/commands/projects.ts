import type { Command } from '../command.ts';

export const projects: Command = {
  name: 'projects',
  summary: 'list and create projects (projects ls, projects create)',
  help: `Usage: slipway projects ls [--org <org>] [--json]
       slipway projects create <name> [--repo <url>] [--branch <branch>] [--org <org>] [--exists-ok] [--json]

ls lists the projects of every organization you belong to (or of --org, an id or name):
name, id, organization and production URL.

create makes a project in --org (default: your only organization, or your personal one) and
prints its id. With --repo (https, ssh, or a path on the service's machine) it builds that
repository from --branch (default main); without, it deploys the folders you upload with
\`slipway deploy\` (which, in a folder not linked yet, offers to create one). With
--exists-ok, a project of that name that already exists in the organization is not an error:
its id is printed (scripts can run twice).`,
  options: {
    org: { type: 'string' },
    repo: { type: 'string' },
    branch: { type: 'string' },
    'exists-ok': { type: 'boolean' },
  },
  run: (p, io) => import('../run/projects.ts').then((m) => m.projects(p, io)),
};

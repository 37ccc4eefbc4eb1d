import type { Command } from '../command.ts';

export const link: Command = {
  name: 'link',
  summary: 'remember the project for this folder',
  help: `Usage: slipway link [project] [--org <org>] [--dir <folder>]

Remembers the project (its name or prj_ id; default the folder's name) for the folder, so
deploy, rollback and env need no --project there or below it. The link is kept in
<folder>/.slipway/project.json, which is never uploaded and ignores itself in git.

  slipway link web
  slipway link web --org acme        # when several organizations have a "web"`,
  options: { org: { type: 'string' }, dir: { type: 'string' } },
  run: (p, io) => import('../run/link.ts').then((m) => m.link(p, io)),
};

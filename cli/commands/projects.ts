import { type Command, flag, positionals, printJson, str } from '../command.ts';
import { openSession } from '../session.ts';
import { table } from '../table.ts';
import { UsageError } from '../usage-error.ts';
import type { Project } from '../../api/schemas/projects.ts';

export const projects: Command = {
  name: 'projects',
  summary: 'list your projects (projects ls)',
  help: `Usage: slipway projects ls [--org <org>] [--json]

Lists the projects of every organization you belong to (or of --org, an id or name):
name, id, organization and production URL.`,
  options: { org: { type: 'string' } },
  async run(p, io) {
    const [sub] = positionals(p, ['subcommand'], 1);
    if (sub !== 'ls' && sub !== 'list') throw new UsageError(`Unknown subcommand "${sub}": expected ls.`);
    const session = await openSession(io);
    const all: Project[] = [];
    for await (const project of session.client.iterate.projects({ org: str(p, 'org'), limit: 100 })) {
      all.push(project);
    }
    if (flag(p, 'json')) {
      printJson(io, all);
      return 0;
    }
    if (all.length === 0) {
      io.err('No projects yet: create one with POST /v1/projects (see docs/api.md).\n');
      return 0;
    }
    io.out(
      table(
        ['NAME', 'ID', 'ORGANIZATION', 'PRODUCTION'],
        all.map((x) => [x.name, x.id, x.organizationId, x.deploymentUrl ?? '-']),
      ),
    );
    return 0;
  },
};

import { findProject } from '../../api/client/find-project.ts';
import { ApiError } from '../../api/client/index.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { type Command, flag, positionals, printJson, str } from '../command.ts';
import type { Io } from '../io.ts';
import { openSession, organizationFor } from '../session.ts';
import { table } from '../table.ts';
import { UsageError } from '../usage-error.ts';

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
  async run(p, io) {
    const [sub, name] = positionals(p, ['subcommand', 'name'], 1);
    if (sub === 'create') return create(p, io, name);
    if (sub !== 'ls' && sub !== 'list')
      throw new UsageError(`Unknown subcommand "${sub}": expected ls or create.`);
    if (name) throw new UsageError(`Unexpected argument "${name}".`);
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
      io.err(
        'No projects yet: `slipway deploy` in a folder creates one, or `slipway projects create <name>`.\n',
      );
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

async function create(p: Parameters<Command['run']>[0], io: Io, name: string | undefined): Promise<number> {
  if (!name) throw new UsageError('Missing <name>.');
  const repo = str(p, 'repo');
  if (repo === '') throw new UsageError('--repo needs the URL of a git repository, or leave it out.');
  const session = await openSession(io);
  const organizationId = (await organizationFor(session, str(p, 'org'))).id;
  let project: Project;
  try {
    project = await session.client.projects.create({
      name,
      ...(repo ? { repositoryUrl: repo } : {}),
      organizationId,
      ...(str(p, 'branch') ? { branch: str(p, 'branch') } : {}),
    });
    io.err(
      `Created project ${project.name} (${project.id})${repo ? '' : ', for uploaded files: `slipway deploy` in a folder'}.\n`,
    );
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'CONFLICT' || !flag(p, 'exists-ok')) throw err;
    project = await findProject(session.client, name, organizationId, {
      who: 'you',
      orgHint: 'pass --org',
    });
    io.err(`Project ${project.name} exists already (${project.id}).\n`);
  }
  if (flag(p, 'json')) printJson(io, project);
  else io.out(`${project.id}\n`);
  return 0;
}

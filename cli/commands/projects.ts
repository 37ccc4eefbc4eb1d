import { findProject } from '../../api/client/find-project.ts';
import { ApiError } from '../../api/client/index.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { type Command, flag, positionals, printJson, str } from '../command.ts';
import type { Io } from '../io.ts';
import { openSession, type Session } from '../session.ts';
import { table } from '../table.ts';
import { UsageError } from '../usage-error.ts';

export const projects: Command = {
  name: 'projects',
  summary: 'list and create projects (projects ls, projects create)',
  help: `Usage: slipway projects ls [--org <org>] [--json]
       slipway projects create <name> --repo <url> [--branch <branch>] [--org <org>] [--exists-ok] [--json]

ls lists the projects of every organization you belong to (or of --org, an id or name):
name, id, organization and production URL.

create makes a project that builds the repository at --repo (https, ssh, or a path on the
service's machine) from --branch (default main) in --org (default: your only organization, or
your personal one). It prints the project's id. With --exists-ok, a project of that name that
already exists in the organization is not an error: its id is printed (scripts can run twice).`,
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
      io.err('No projects yet: create one with `slipway projects create <name> --repo <url>`.\n');
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

/** The organization to create in: --org, else the only one, else the personal one (the first). */
async function organizationFor(session: Session, org: string | undefined): Promise<string> {
  if (org) return (await session.client.organizations.get(org)).id;
  const me = await session.client.user.get();
  const first = me.organizations[0];
  if (!first) throw new UsageError('You are in no organization: pass --org, or create one first.');
  return first.id;
}

async function create(p: Parameters<Command['run']>[0], io: Io, name: string | undefined): Promise<number> {
  if (!name) throw new UsageError('Missing <name>.');
  const repo = str(p, 'repo');
  if (!repo) throw new UsageError('Missing --repo <url>: the repository the project builds.');
  const session = await openSession(io);
  const organizationId = await organizationFor(session, str(p, 'org'));
  let project: Project;
  try {
    project = await session.client.projects.create({
      name,
      repositoryUrl: repo,
      organizationId,
      ...(str(p, 'branch') ? { branch: str(p, 'branch') } : {}),
    });
    io.err(`Created project ${project.name} (${project.id}).\n`);
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

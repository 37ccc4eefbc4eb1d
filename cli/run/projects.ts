import { findProject } from '../../api/client/find-project.ts';
import { ApiError } from '../../api/client/index.ts';
import type { Project } from '../../api/schemas/projects.ts';
import { flag, positionals, printJson, str, type Parsed } from '../command.ts';
import type { Io } from '../io.ts';
import { openSession, organizationFor } from '../session.ts';
import { table } from '../table.ts';
import { didYouMean } from '../suggest.ts';
import { UsageError } from '../usage-error.ts';

async function create(p: Parsed, io: Io, name: string | undefined): Promise<number> {
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

export async function projects(p: Parsed, io: Io): Promise<number> {
  const [sub, name] = positionals(p, ['subcommand', 'name'], 1);
  if (sub === 'create') return create(p, io, name);
  if (sub !== 'ls' && sub !== 'list')
    throw new UsageError(
      `Unknown subcommand "${sub}": expected ls or create.${didYouMean(sub ?? '', ['ls', 'create'])}`,
    );
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
}

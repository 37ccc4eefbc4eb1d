import type { DeployHook } from '../../api/schemas/deploy-hooks.ts';
import { type Parsed, positionals, printJson, str } from '../command.ts';
import type { Io } from '../io.ts';
import { openSession, targetProject } from '../session.ts';
import { table } from '../table.ts';
import { didYouMean } from '../suggest.ts';
import { UsageError } from '../usage-error.ts';

const projectOf = async (p: Parsed, io: Io) => {
  const session = await openSession(io);
  const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
  return { session, project };
};

async function list(p: Parsed, io: Io): Promise<number> {
  positionals(p, ['subcommand', 'name']);
  const { session, project } = await projectOf(p, io);
  const hooks: DeployHook[] = [];
  for await (const h of session.client.iterate.deployHooks(project.id, { limit: 100 })) hooks.push(h);
  if (p.values.json === true) printJson(io, hooks);
  else if (hooks.length === 0) io.err(`${project.name} has no deploy hooks.\n`);
  else {
    io.out(
      table(
        ['ID', 'NAME', 'BRANCH', 'LAST USED', 'MADE BY'],
        hooks.map((h) => [h.id, h.name, h.branch, h.lastUsedAt ?? 'never', h.createdBy]),
      ),
    );
  }
  return 0;
}

async function create(p: Parsed, io: Io): Promise<number> {
  const [, name] = positionals(p, ['subcommand', 'name'], 2);
  const { session, project } = await projectOf(p, io);
  const hook = await session.client.deployHooks.create(project.id, {
    name: name!,
    branch: str(p, 'branch') ?? project.branch,
  });
  if (p.values.json === true) printJson(io, hook);
  else {
    // The URL alone on stdout, so that it can be piped into a secret store.
    io.out(`${hook.url}\n`);
    io.err(
      `Deploy hook ${hook.name} (${hook.id}) builds ${hook.branch} of ${project.name} when POSTed. ` +
        'Its URL is shown this once: keep it secret.\n',
    );
  }
  return 0;
}

async function remove(p: Parsed, io: Io): Promise<number> {
  const [, id] = positionals(p, ['subcommand', 'id'], 2);
  const { session, project } = await projectOf(p, io);
  const { message } = await session.client.deployHooks.remove(project.id, id!);
  if (p.values.json === true) printJson(io, { message });
  else io.err(`${message}.\n`);
  return 0;
}

export async function hooks(p: Parsed, io: Io): Promise<number> {
  const [sub] = positionals(p, ['subcommand', 'name'], 1);
  if (sub === 'ls' || sub === 'list') return list(p, io);
  if (sub === 'create') return create(p, io);
  if (sub === 'rm' || sub === 'remove') return remove(p, io);
  throw new UsageError(
    `Unknown subcommand "${sub}": expected ls, create or rm.${didYouMean(sub ?? '', ['ls', 'create', 'rm'])}`,
  );
}

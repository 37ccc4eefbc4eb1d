import { basename, resolve } from 'node:path';
import { findProject } from '../../api/client/find-project.ts';
import { flag, positionals, printJson, str, type Parsed } from '../command.ts';
import { writeLink } from '../link-store.ts';
import { openSession } from '../session.ts';
import type { Io } from '../io.ts';

export async function link(p: Parsed, io: Io): Promise<number> {
  const [given] = positionals(p, ['project']);
  const dir = resolve(io.cwd, str(p, 'dir') ?? '.');
  const session = await openSession(io);
  const name = given ?? basename(dir);
  const project = await findProject(session.client, name, str(p, 'org'), {
    who: 'you',
    orgHint: 'add --org',
  }).catch((err: Error) => {
    throw given ? err : new Error(`${err.message} Name the project: slipway link <project>.`);
  });
  const file = await writeLink(dir, {
    projectId: project.id,
    projectName: project.name,
    organizationId: project.organizationId,
    apiUrl: session.apiUrl,
  });
  if (flag(p, 'json')) printJson(io, { project, file });
  else io.err(`Linked ${dir} to project ${project.name} (${project.id}).\n`);
  return 0;
}

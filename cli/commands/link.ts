import { basename, resolve } from 'node:path';
import { findProject } from '../../api/client/find-project.ts';
import { type Command, flag, positionals, printJson, str } from '../command.ts';
import { writeLink } from '../link-store.ts';
import { openSession } from '../session.ts';

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
  async run(p, io) {
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
  },
};

import { flag, positionals, printJson, type Parsed } from '../command.ts';
import { followToEnd } from '../follow.ts';
import { openSession } from '../session.ts';
import type { Io } from '../io.ts';

export async function promote(p: Parsed, io: Io): Promise<number> {
  const [id] = positionals(p, ['deployment'], 1);
  const session = await openSession(io);
  const promoted = await followToEnd(session, io, await session.client.deployments.promote(id!));
  const project = await session.client.projects.get(promoted.projectId);
  if (flag(p, 'json')) printJson(io, promoted);
  if (promoted.status !== 'live') {
    io.err(`Promotion of ${id} failed${promoted.errorMessage ? `: ${promoted.errorMessage}` : ''}\n`);
    return 1;
  }
  const url = project.deploymentUrl ?? promoted.url;
  io.err(`Promoted ${id}: production of ${project.name} is ${url}\n`);
  if (!flag(p, 'json')) io.out(`${url}\n`);
  return 0;
}

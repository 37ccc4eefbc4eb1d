import { flag, positionals, printJson, str, type Parsed } from '../command.ts';
import { followToEnd } from '../follow.ts';
import { openSession, targetProject } from '../session.ts';
import type { Io } from '../io.ts';

export async function rollback(p: Parsed, io: Io): Promise<number> {
  const [given] = positionals(p, ['deployment']);
  const session = await openSession(io);
  let from = given;
  if (!from) {
    const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
    if (!project.productionDeploymentId) {
      throw new Error(`Project ${project.name} has no production deployment to roll back from.`);
    }
    from = project.productionDeploymentId;
  }
  const to = str(p, 'to');
  const created = await session.client.deployments.rollback(from, to ? { to } : {});
  io.err(`Rolling back from ${from}: ${created.id}\n`);
  const back = flag(p, 'no-wait') ? created : await followToEnd(session, io, created);
  if (flag(p, 'json')) printJson(io, back);
  if (back.status === 'failed') {
    io.err(`Rollback ${back.id} failed${back.errorMessage ? `: ${back.errorMessage}` : ''}\n`);
    return 1;
  }
  const project = await session.client.projects.get(back.projectId);
  const url = project.deploymentUrl ?? back.url;
  if (back.status === 'live') io.err(`Rolled back: production of ${project.name} is ${url} (${back.id})\n`);
  if (!flag(p, 'json')) io.out(`${url}\n`);
  return 0;
}

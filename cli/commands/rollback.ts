import { type Command, flag, positionals, printJson, str } from '../command.ts';
import { followToEnd } from '../follow.ts';
import { openSession, targetProject } from '../session.ts';

export const rollback: Command = {
  name: 'rollback',
  summary: 'roll production back to the deployment before it',
  help: `Usage: slipway rollback [deployment] [--to <deployment>] [--project <p>] [--org <o>]
                        [--no-wait] [--json]

Rolls production back from <deployment> (default: the project's current production
deployment) to the production deployment that went live before it, or with --to to any
earlier production deployment. Its build is reused, so it is live within seconds; the
production URL is printed.

  slipway rollback                   # in a linked folder
  slipway rollback --to dpl_7Hq...   # back to that one`,
  options: {
    project: { type: 'string' },
    org: { type: 'string' },
    to: { type: 'string' },
    'no-wait': { type: 'boolean' },
  },
  async run(p, io) {
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
  },
};

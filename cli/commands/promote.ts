import { type Command, flag, positionals, printJson } from '../command.ts';
import { followToEnd } from '../follow.ts';
import { openSession } from '../session.ts';

export const promote: Command = {
  name: 'promote',
  summary: 'make a live preview the production deployment',
  help: `Usage: slipway promote <deployment> [--json]

Makes a live preview deployment its project's production deployment, without a rebuild,
and prints the production URL.

  slipway promote dpl_2Zk9...`,
  options: {},
  async run(p, io) {
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
  },
};

import { flag, type Parsed, positionals, str } from '../command.ts';
import { opener, openUrl } from '../browser.ts';
import type { Io } from '../io.ts';
import { openSession, targetProject } from '../session.ts';

export async function open(p: Parsed, io: Io): Promise<number> {
  const [id] = positionals(p, ['deployment']);
  const session = await openSession(io);
  let url: string;
  if (id) {
    url = (await session.client.deployments.get(id)).url;
  } else {
    const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
    if (!project.deploymentUrl) {
      throw new Error(
        `${project.name} has no production deployment yet: \`slipway deploy --prod\` makes one, or name a deployment (\`slipway ls\` lists them).`,
      );
    }
    url = project.deploymentUrl;
  }
  if (flag(p, 'print')) {
    io.out(`${url}\n`);
    return 0;
  }
  const command = opener(io.env);
  if (await openUrl(command, url, io.env)) {
    io.err(`Opened ${url}\n`);
    return 0;
  }
  io.err(`Could not run ${command[0]} to open a browser; the URL:\n`);
  io.out(`${url}\n`);
  return 0;
}

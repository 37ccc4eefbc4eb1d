import { LogType } from '../../api/schemas/deployments.ts';
import { flag, positionals, str, type Parsed } from '../command.ts';
import { openSession, type Session, targetProject } from '../session.ts';
import { UsageError } from '../usage-error.ts';
import type { Io } from '../io.ts';

export async function logs(p: Parsed, io: Io): Promise<number> {
  const [given] = positionals(p, ['deployment']);
  const type = LogType.safeParse(str(p, 'type') ?? 'build');
  if (!type.success) throw new UsageError(`--type must be one of ${LogType.options.join(', ')}.`);
  const tailText = str(p, 'tail');
  const tail = tailText === undefined ? undefined : Number(tailText);
  if (tail !== undefined && !(Number.isInteger(tail) && tail >= 1 && tail <= 10_000)) {
    throw new UsageError(`--tail must be a whole number from 1 to 10000; got "${tailText}".`);
  }
  const json = flag(p, 'json');
  const session = await openSession(io);
  const id = given ?? (await newest(session, io, p));
  if (given && !flag(p, 'follow')) {
    const got = await session.client.deployments.logs(id, { type: type.data, tail });
    const lines = got.logs === '' ? [] : got.logs.split('\n');
    if (json) for (const line of lines) io.out(`${JSON.stringify({ line })}\n`);
    else if (lines.length) io.out(`${lines.join('\n')}\n`);
    return 0;
  }
  return io.interruptible(async (signal) => {
    try {
      for await (const event of session.client.deployments.followLogEvents(id, {
        type: type.data,
        tail,
        signal,
      })) {
        if (event.kind === 'line') {
          io.out(json ? `${JSON.stringify({ line: event.line })}\n` : `${event.line}\n`);
          continue;
        }
        const end = { status: event.status, errorMessage: event.errorMessage };
        if (json) io.out(`${JSON.stringify({ end })}\n`);
        else io.err(`Deployment ${id} is ${end.status}${end.errorMessage ? `: ${end.errorMessage}` : ''}.\n`);
        return end.status === 'failed' ? 1 : 0;
      }
      return 0;
    } catch (err) {
      // Ctrl-C ends following quietly: the deployment goes on.
      if (signal.aborted) return 130;
      throw err;
    }
  });
}

/** The newest deployment of the linked project (or --project), said on standard error. */
async function newest(session: Session, io: Io, p: Parsed): Promise<string> {
  const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
  const [latest] = (await session.client.deployments.list(project.id, { limit: 1 })).data;
  if (!latest) throw new Error(`${project.name} has no deployments yet: \`slipway deploy\` makes one.`);
  io.err(
    `Following ${latest.id} (${latest.target}, ${latest.branch}, ${latest.status}) of ${project.name}\n`,
  );
  return latest.id;
}

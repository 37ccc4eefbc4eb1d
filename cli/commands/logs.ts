import { LogType } from '../../api/schemas/deployments.ts';
import { type Command, flag, positionals, str } from '../command.ts';
import { openSession } from '../session.ts';
import { UsageError } from '../usage-error.ts';

export const logs: Command = {
  name: 'logs',
  summary: "print a deployment's log (-f to follow it)",
  help: `Usage: slipway logs <deployment> [-f] [--type build|runtime|error] [--tail <n>] [--json]

Prints the last lines (--tail, default 100, at most 10000) of a deployment's build log, or
of its runtime or error log. With -f (--follow) it goes on printing lines as they are
written until the deployment is live or failed, and exits 1 if it failed.
--json prints one JSON object per line: {"line": ...}, and with -f a last {"end": ...}.

  slipway logs dpl_2Zk9... -f`,
  options: {
    follow: { type: 'boolean', short: 'f' },
    type: { type: 'string' },
    tail: { type: 'string' },
  },
  async run(p, io) {
    const [id] = positionals(p, ['deployment'], 1);
    const type = LogType.safeParse(str(p, 'type') ?? 'build');
    if (!type.success) throw new UsageError(`--type must be one of ${LogType.options.join(', ')}.`);
    const tailText = str(p, 'tail');
    const tail = tailText === undefined ? undefined : Number(tailText);
    if (tail !== undefined && !(Number.isInteger(tail) && tail >= 1 && tail <= 10_000)) {
      throw new UsageError(`--tail must be a whole number from 1 to 10000; got "${tailText}".`);
    }
    const json = flag(p, 'json');
    const session = await openSession(io);
    if (!flag(p, 'follow')) {
      const got = await session.client.deployments.logs(id!, { type: type.data, tail });
      const lines = got.logs === '' ? [] : got.logs.split('\n');
      if (json) for (const line of lines) io.out(`${JSON.stringify({ line })}\n`);
      else if (lines.length) io.out(`${lines.join('\n')}\n`);
      return 0;
    }
    return io.interruptible(async (signal) => {
      try {
        for await (const event of session.client.deployments.followLogEvents(id!, {
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
          else
            io.err(`Deployment ${id} is ${end.status}${end.errorMessage ? `: ${end.errorMessage}` : ''}.\n`);
          return end.status === 'failed' ? 1 : 0;
        }
        return 0;
      } catch (err) {
        // Ctrl-C ends following quietly: the deployment goes on.
        if (signal.aborted) return 130;
        throw err;
      }
    });
  },
};

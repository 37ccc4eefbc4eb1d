import type { Deployment } from '../api/schemas/deployments.ts';
import { flag, type Parsed, printJson } from './command.ts';
import type { Io } from './io.ts';
import type { Session } from './session.ts';

/**
 * Follows a deployment until it is live or failed, passing each build log line to `onLine`,
 * and returns it as it ended. Ctrl-C stops following; the deployment goes on.
 */
export async function followToEnd(
  session: Session,
  io: Io,
  deployment: Deployment,
  onLine?: (line: string) => void,
): Promise<Deployment> {
  if (deployment.status === 'live' || deployment.status === 'failed') return deployment;
  await io.interruptible(async (signal) => {
    try {
      for await (const event of session.client.deployments.followLogEvents(deployment.id, { signal })) {
        if (event.kind === 'line') onLine?.(event.line);
      }
    } catch (err) {
      if (signal.aborted) throw stoppedFollowing(deployment.id);
      throw err;
    }
  });
  return session.client.deployments.get(deployment.id);
}

/** `12.3s`, `850ms`. */
export const seconds = (ms: number) => (ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`);

/** What Ctrl-C while following says. */
export const stoppedFollowing = (id: string) =>
  new Error(`Stopped following; ${id} goes on. \`slipway logs ${id} -f\` follows it again.`);

/**
 * The end of a command that started a deployment: with --no-wait its URL (or --json the
 * deployment) at once; else follows its build log to the end and prints the URL it is live at
 * (production's for a production deployment). 0 when live (or queued), 1 when it failed.
 */
export async function settle(
  session: Session,
  io: Io,
  p: Parsed,
  created: Deployment,
  started: number,
): Promise<number> {
  if (flag(p, 'no-wait')) {
    if (flag(p, 'json')) printJson(io, created);
    else io.out(`${created.url}\n`);
    return 0;
  }
  const done = await followToEnd(session, io, created, (line) => io.err(`  ${line}\n`));
  if (flag(p, 'json')) printJson(io, done);
  if (done.status !== 'live') {
    io.err(`Deployment ${done.id} failed${done.errorMessage ? `: ${done.errorMessage}` : ''}\n`);
    return 1;
  }
  const production = done.target === 'production';
  const url = production
    ? ((await session.client.projects.get(done.projectId)).deploymentUrl ?? done.url)
    : done.url;
  io.err(`Live in ${seconds(Date.now() - started)}${production ? ' (production)' : ''}: ${url}\n`);
  if (!flag(p, 'json')) io.out(`${url}\n`);
  return 0;
}

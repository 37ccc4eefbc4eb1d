import type { Deployment } from '../../api/schemas/deployments.ts';
import { flag, type Parsed, positionals, printJson, str } from '../command.ts';
import type { Io } from '../io.ts';
import { openSession, targetProject } from '../session.ts';
import { table } from '../table.ts';
import { UsageError } from '../usage-error.ts';

/** `42s`, `5m`, `3h`, `2d` since `iso`. */
export function age(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

export async function ls(p: Parsed, io: Io): Promise<number> {
  positionals(p, []);
  const limitText = str(p, 'limit') ?? '20';
  const limit = Number(limitText);
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
    throw new UsageError(`--limit must be a whole number from 1 to 100; got "${limitText}".`);
  }
  const session = await openSession(io);
  const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
  const page = await session.client.deployments.list(project.id, {
    limit,
    ...(flag(p, 'prod') ? { target: 'production' as const } : {}),
    ...(str(p, 'branch') ? { branch: str(p, 'branch') } : {}),
  });
  const deployments: Deployment[] = page.data;
  if (flag(p, 'json')) {
    printJson(io, deployments);
    return 0;
  }
  if (deployments.length === 0) {
    io.err(
      `${project.name} has no deployments${flag(p, 'prod') || str(p, 'branch') ? ' of that kind' : ''} yet: \`slipway deploy\` makes one.\n`,
    );
    return 0;
  }
  const now = Date.now();
  io.out(
    table(
      ['ID', 'STATUS', 'TARGET', 'BRANCH', 'COMMIT', 'AGE', 'URL'],
      deployments.map((d) => [
        d.id === project.productionDeploymentId ? `${d.id} *` : d.id,
        d.status,
        d.target,
        d.branch,
        d.commitHash?.slice(0, 7) ?? '-',
        age(d.createdAt, now),
        d.url,
      ]),
    ),
  );
  return 0;
}

import { type Parsed, positionals } from '../command.ts';
import { settle } from '../follow.ts';
import type { Io } from '../io.ts';
import { openSession } from '../session.ts';

export async function redeploy(p: Parsed, io: Io): Promise<number> {
  const [id] = positionals(p, ['deployment'], 1);
  const started = Date.now();
  const session = await openSession(io);
  const created = await session.client.deployments.redeploy(id!);
  io.err(`Redeploying ${id} (${created.target}, ${created.branch}): ${created.id}\n`);
  return settle(session, io, p, created, started);
}

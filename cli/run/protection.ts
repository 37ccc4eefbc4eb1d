import { Protection } from '../../api/schemas/projects.ts';
import type { ShareLink } from '../../api/schemas/protection.ts';
import { type Parsed, positionals, printJson, str } from '../command.ts';
import { table } from '../table.ts';
import { didYouMean } from '../suggest.ts';
import type { Io } from '../io.ts';
import { openSession, targetProject } from '../session.ts';
import { UsageError } from '../usage-error.ts';

const projectOf = async (p: Parsed, io: Io) => {
  const session = await openSession(io);
  const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
  return { session, project };
};

const SAYS = {
  none: 'everyone can open every URL',
  previews:
    "previews' URLs need a member's sign-in, a share link or the bypass secret; production stays public",
  all: "every URL, production's too, needs a member's sign-in, a share link or the bypass secret",
};

async function show(p: Parsed, io: Io): Promise<number> {
  positionals(p, ['subcommand']);
  const { project } = await projectOf(p, io);
  const protection = project.protection ?? 'none';
  if (p.values.json === true) {
    printJson(io, { protection, bypassCreatedAt: project.protectionBypassCreatedAt ?? null });
    return 0;
  }
  io.out(`${protection}\n`);
  io.err(
    `${project.name}: ${SAYS[protection]}. Bypass secret: ${project.protectionBypassCreatedAt ? `made ${project.protectionBypassCreatedAt}` : 'none'}.\n`,
  );
  return 0;
}

async function set(p: Parsed, io: Io): Promise<number> {
  const [, value] = positionals(p, ['subcommand', 'value'], 2);
  const parsed = Protection.safeParse(value);
  if (!parsed.success) throw new UsageError(`Unknown protection "${value}": expected none, previews or all.`);
  const { session, project } = await projectOf(p, io);
  const updated = await session.client.projects.update(project.id, { protection: parsed.data });
  io.err(`${updated.name}: ${SAYS[parsed.data]}.\n`);
  return 0;
}

async function bypass(p: Parsed, io: Io): Promise<number> {
  const [, op] = positionals(p, ['subcommand', 'op'], 1);
  const { session, project } = await projectOf(p, io);
  if (op === 'rm' || op === 'remove') {
    const { message } = await session.client.protection.removeBypass(project.id);
    io.err(`${message}.\n`);
    return 0;
  }
  if (op !== undefined) throw new UsageError(`Unknown bypass operation "${op}": expected nothing or rm.`);
  const made = await session.client.protection.rotateBypass(project.id);
  // The secret alone on stdout, so that it can be piped into a secret store.
  io.out(`${made.secret}\n`);
  io.err(
    `Bypass secret of ${project.name}: send it as the x-slipway-protection-bypass header. ` +
      'It is shown this once; any earlier one stopped working.\n',
  );
  return 0;
}

async function listLinks(p: Parsed, io: Io): Promise<number> {
  positionals(p, ['subcommand', 'op']);
  const { session, project } = await projectOf(p, io);
  const links: ShareLink[] = [];
  for await (const l of session.client.iterate.shareLinks(project.id, { limit: 100 })) links.push(l);
  if (p.values.json === true) printJson(io, links);
  else if (links.length === 0) io.err(`${project.name} has no share links.\n`);
  else {
    const now = Date.now();
    io.out(
      table(
        ['ID', 'OPENS', 'EXPIRES', 'MADE BY'],
        links.map((l) => [
          l.id,
          l.target,
          Date.parse(l.expiresAt) > now ? l.expiresAt : `${l.expiresAt} (expired)`,
          l.createdBy,
        ]),
      ),
    );
  }
  return 0;
}

async function revokeLink(p: Parsed, io: Io): Promise<number> {
  const [, , linkId] = positionals(p, ['subcommand', 'op', 'link-id'], 3);
  if (!linkId!.startsWith('psl_'))
    throw new UsageError(
      `"${linkId}" is not a share link's id: they start with psl_ (see \`slipway protection share list\`).`,
    );
  const { session, project } = await projectOf(p, io);
  const { message } = await session.client.protection.revokeLink(project.id, linkId!);
  io.err(`${message}: it opens nothing from now on, and the cookies it set are refused.\n`);
  return 0;
}

async function share(p: Parsed, io: Io): Promise<number> {
  const op = p.positionals[1];
  if (op === 'list' || op === 'ls') return listLinks(p, io);
  if (op === 'revoke' || op === 'rm') return revokeLink(p, io);
  const [, deploymentId] = positionals(p, ['subcommand', 'deployment'], 2);
  const hours = str(p, 'hours');
  const { session, project } = await projectOf(p, io);
  const link = await session.client.protection.share(project.id, {
    deploymentId: deploymentId!,
    ...(hours === undefined ? {} : { expiresInHours: Number(hours) }),
  });
  if (p.values.json === true) printJson(io, link);
  else {
    io.out(`${link.url}\n`);
    io.err(`Anyone with this link can open ${project.name}'s protected URLs until ${link.expiresAt}.\n`);
  }
  return 0;
}

export async function protection(p: Parsed, io: Io): Promise<number> {
  // Each sub-command checks its own arguments (`share revoke <link-id>` has three).
  const sub = p.positionals[0];
  if (sub === undefined || sub === 'show') return show(p, io);
  if (sub === 'set') return set(p, io);
  if (sub === 'bypass') return bypass(p, io);
  if (sub === 'share') return share(p, io);
  throw new UsageError(
    `Unknown subcommand "${sub}": expected set, bypass or share.${didYouMean(sub, ['set', 'bypass', 'share'])}`,
  );
}

import { stat } from 'node:fs/promises';
import { basename, resolve, sep } from 'node:path';
import { findProject } from '../../api/client/find-project.ts';
import { ApiError } from '../../api/client/index.ts';
import type { Project } from '../../api/schemas/projects.ts';
import type { CreateDeploymentBody, Deployment } from '../../api/schemas/deployments.ts';
import { collectFiles, LEFT_OUT_BY_DEFAULT, SECRETS_LEFT_OUT } from '../../api/upload/collect-files.ts';
import { countFiles } from '../../api/upload/format.ts';
import { uploadFiles } from '../../api/upload/upload-files.ts';
import { flag, type Parsed, positionals, printJson, str } from '../command.ts';
import { followToEnd, seconds } from '../follow.ts';
import { gitLabels } from '../git-labels.ts';
import { uploadProgress } from '../progress.ts';
import type { Io } from '../io.ts';
import { writeLink } from '../link-store.ts';
import { openSession, organizationFor, projectNameFor, type Session, targetProject } from '../session.ts';
import { UsageError } from '../usage-error.ts';

/** One line naming what stayed behind, and where the rules are. */
function leftOutLine(names: string[]): string {
  const shown = names.slice(0, 8).join(', ');
  const more = names.length > 8 ? ` and ${names.length - 8} more` : '';
  return `Left out: ${shown}${more} — see docs/cli.md#what-is-uploaded\n`;
}

/**
 * A folder that is not linked yet, as Vercel and Netlify do: a project named after the folder
 * (the current one, or the deployed one when it is elsewhere), for uploaded files, in --org or
 * the personal organization, linked there. Asked on a terminal; --yes decides; otherwise an
 * error saying both ways on.
 */
async function createAndLink(session: Session, io: Io, p: Parsed, root: string): Promise<Project> {
  const cwd = resolve(io.cwd);
  const dir = root === cwd || root.startsWith(`${cwd}${sep}`) ? cwd : root;
  const name = projectNameFor(basename(dir));
  if (!flag(p, 'yes') && !io.stdinIsTty) {
    throw new Error(
      `No project is linked to ${dir}. Add --yes to create project ${name} for it and link it, ` +
        'or run `slipway link <project>` there to deploy into a project that exists.',
    );
  }
  const org = await organizationFor(session, str(p, 'org'));
  if (!flag(p, 'yes')) {
    const answer = await io.askLine(
      `No project is linked to ${dir}. Create project ${name} in ${org.name} and link it? [Y/n] `,
    );
    if (!/^(y|yes|)$/i.test(answer.trim())) {
      throw new Error('Nothing was created. `slipway link <project>` links a project that exists.');
    }
  }
  let project: Project;
  let made = true;
  try {
    project = await session.client.projects.create({ name, organizationId: org.id });
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'CONFLICT') throw err;
    project = await findProject(session.client, name, org.id, { who: 'you', orgHint: 'pass --org' });
    made = false;
  }
  await writeLink(dir, {
    projectId: project.id,
    projectName: project.name,
    organizationId: project.organizationId,
    apiUrl: session.apiUrl,
  });
  io.err(
    made
      ? `Created project ${project.name} (${project.id}) in ${org.name}, and linked ${dir} to it.\n`
      : `Linked ${dir} to project ${project.name} (${project.id}), which ${org.name} has already.\n`,
  );
  return project;
}

export async function deploy(p: Parsed, io: Io): Promise<number> {
  const [folder] = positionals(p, ['folder']);
  const root = resolve(io.cwd, folder ?? '.');
  const isDir = await stat(root).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new UsageError(`${root} is not a folder.`);
  const prebuilt = flag(p, 'prebuilt');
  const started = Date.now();
  const session = await openSession(io);
  const project = await targetProject(
    session,
    io,
    { project: str(p, 'project'), org: str(p, 'org') },
    root,
    () => createAndLink(session, io, p, root),
  );

  const leftOut: string[] = [];
  const local = await collectFiles(root, {
    // Build output is often git-ignored (dist/): only .slipwayignore applies to it.
    ignoreFiles: prebuilt ? ['.slipwayignore'] : ['.gitignore', '.slipwayignore'],
    // A server's build output carries its own node_modules (Nitro, Next.js standalone).
    leaveOut: prebuilt ? SECRETS_LEFT_OUT : LEFT_OUT_BY_DEFAULT,
    takeBackFile: '.slipwayignore',
    onLeftOut: (path, isDir, n) => leftOut.push(isDir ? `${path} (${countFiles(n)})` : path),
    onSkip: (path, reason) => leftOut.push(`${path} (${reason})`),
  });
  if (leftOut.length) io.err(leftOutLine(leftOut));
  if (local.length === 0) throw new Error(`${root} holds no files to deploy.`);
  const up = await uploadFiles(session.client.uploads, project.id, local, {
    onProgress: uploadProgress(io),
  });

  const target = flag(p, 'prod') ? 'production' : 'preview';
  const body: CreateDeploymentBody = {
    ...(await gitLabels(root)),
    target,
    files: up.files,
    ...(prebuilt ? { prebuilt: true } : {}),
    ...(flag(p, 'no-cache') ? { cache: false } : {}),
    ...(str(p, 'message') ? { message: str(p, 'message') } : {}),
  };
  const created = await session.client.deployments.create(project.id, body);
  io.err(`Deploying ${project.name} (${target}): ${created.id}\n`);
  if (flag(p, 'no-wait')) {
    if (flag(p, 'json')) printJson(io, created);
    else io.out(`${created.url}\n`);
    return 0;
  }
  const done: Deployment = await followToEnd(session, io, created, (line) => io.err(`  ${line}\n`));
  if (flag(p, 'json')) printJson(io, done);
  if (done.status !== 'live') {
    io.err(`Deployment ${done.id} failed${done.errorMessage ? `: ${done.errorMessage}` : ''}\n`);
    return 1;
  }
  const url =
    target === 'production'
      ? ((await session.client.projects.get(project.id)).deploymentUrl ?? done.url)
      : done.url;
  io.err(
    `Live in ${seconds(Date.now() - started)}${target === 'production' ? ' (production)' : ''}: ${url}\n`,
  );
  if (!flag(p, 'json')) io.out(`${url}\n`);
  return 0;
}

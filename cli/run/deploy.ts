import { stat } from 'node:fs/promises';
import { basename, resolve, sep } from 'node:path';
import { findProject } from '../../api/client/find-project.ts';
import { ApiError } from '../../api/errors.ts';
import type { Project } from '../../api/schemas/projects.ts';
import type { CreateDeploymentBody } from '../../api/schemas/deployments.ts';
import { collectFiles } from '../../api/upload/collect-files.ts';
import { uploadFiles } from '../../api/upload/upload-files.ts';
import { leftOutList, uploadRules } from '../../api/upload/upload-rules.ts';
import { flag, type Parsed, positionals, str } from '../command.ts';
import { settle } from '../follow.ts';
import { gitLabels } from '../git-labels.ts';
import { uploadProgress } from '../progress.ts';
import type { Io } from '../io.ts';
import { writeLink } from '../link-store.ts';
import { openSession, organizationFor, projectNameFor, type Session, targetProject } from '../session.ts';
import { UsageError } from '../usage-error.ts';

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
  const git = flag(p, 'git');
  if (!git && (str(p, 'branch') !== undefined || str(p, 'commit') !== undefined)) {
    throw new UsageError("--branch and --commit go with --git (a build of the project's repository).");
  }
  if (git && (folder !== undefined || flag(p, 'prebuilt'))) {
    throw new UsageError(
      `--git builds the project's repository: it takes no ${folder !== undefined ? `folder ("${folder}")` : '--prebuilt'}.`,
    );
  }
  const root = resolve(io.cwd, folder ?? '.');
  if (!git) {
    const isDir = await stat(root).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) throw new UsageError(`${root} is not a folder.`);
  }
  const started = Date.now();
  const session = await openSession(io);
  const flags = { project: str(p, 'project'), org: str(p, 'org') };
  const project = git
    ? await targetProject(session, io, flags, root)
    : await targetProject(session, io, flags, root, () => createAndLink(session, io, p, root));
  const target = flag(p, 'prod') ? 'production' : 'preview';
  const body: CreateDeploymentBody = {
    ...(git ? gitSource(p) : await uploadSource(session, io, project.id, root, flag(p, 'prebuilt'))),
    target,
    ...(flag(p, 'no-cache') ? { cache: false } : {}),
    ...(str(p, 'message') ? { message: str(p, 'message') } : {}),
  };
  const created = await session.client.deployments.create(project.id, body);
  io.err(`Deploying ${project.name} (${target}${git ? `, ${created.branch}` : ''}): ${created.id}\n`);
  return settle(session, io, p, created, started);
}

/** `--git [--branch b] [--commit c]`: the project's repository, its branch's head by default. */
function gitSource(p: Parsed): Pick<CreateDeploymentBody, 'branch' | 'commitHash'> {
  const branch = str(p, 'branch');
  const commit = str(p, 'commit');
  if (commit !== undefined && !/^[0-9a-f]{7,40}$/i.test(commit)) {
    throw new UsageError(`--commit must be a commit hash, 7 to 40 hexadecimal characters; got "${commit}".`);
  }
  return { ...(branch ? { branch } : {}), ...(commit ? { commitHash: commit } : {}) };
}

/** The folder's files, uploaded as docs/cli.md#what-is-uploaded says, labelled with its git branch and commit. */
async function uploadSource(
  session: Session,
  io: Io,
  projectId: string,
  root: string,
  prebuilt: boolean,
): Promise<Pick<CreateDeploymentBody, 'files' | 'prebuilt' | 'branch' | 'commitHash'>> {
  const leftOut = leftOutList();
  const local = await collectFiles(root, {
    ...uploadRules(prebuilt),
    onLeftOut: leftOut.onLeftOut,
    onSkip: leftOut.onSkip,
  });
  const line = leftOut.line();
  if (line) io.err(`${line}\n`);
  if (local.length === 0) throw new Error(`${root} holds no files to deploy.`);
  const up = await uploadFiles(session.client.uploads, projectId, local, { onProgress: uploadProgress(io) });
  return { ...(await gitLabels(root)), files: up.files, ...(prebuilt ? { prebuilt: true } : {}) };
}

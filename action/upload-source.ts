import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { CreateDeploymentBody } from '../api/schemas/deployments.ts';
import { collectFiles } from '../api/upload/collect-files.ts';
import { countFiles as files, formatBytes } from '../api/upload/format.ts';
import { uploadFiles, type UploadProgress } from '../api/upload/upload-files.ts';
import { leftOutList, uploadRules } from '../api/upload/upload-rules.ts';
import { formatDuration } from './duration.ts';
import type { Step } from './step.ts';

/**
 * `source: workspace` or `prebuilt`: uploads the directory's files Slipway does not have yet,
 * printing what it sends, and returns the `files` (and `prebuilt`) of the deployment body.
 */
export async function uploadSource(
  step: Step,
  projectId: string,
): Promise<Pick<CreateDeploymentBody, 'files' | 'prebuilt'>> {
  const { inputs, ctx, runner } = step;
  const prebuilt = inputs.source === 'prebuilt';
  const given = prebuilt ? inputs.outputDirectory! : inputs.directory;
  const root = isAbsolute(given) ? given : resolve(ctx.workspace, given);
  const kind = await stat(root).then(
    (s) => (s.isDirectory() ? 'dir' : 'other'),
    () => 'missing',
  );
  if (kind !== 'dir') {
    const input = prebuilt ? 'output-directory' : 'directory';
    throw new Error(
      `Input "${input}": ${root} ${kind === 'missing' ? 'does not exist' : 'is not a directory'}` +
        (prebuilt ? ': run your build before this step' : ': check out the repository before this step'),
    );
  }
  const started = step.now();
  // The same rules as `slipway deploy`: no .env files, node_modules or .git unless named.
  const leftOut = leftOutList();
  const local = await collectFiles(root, {
    ...uploadRules(prebuilt),
    onLeftOut: leftOut.onLeftOut,
    onSkip: leftOut.onSkip,
  });
  const line = leftOut.line();
  if (line) runner.info(line);
  if (local.length === 0) throw new Error(`${root} holds no files to deploy.`);
  let lastShown = 0;
  const show = (p: UploadProgress) => {
    if (p.sent.files === 0) {
      const have = p.total.files - p.toSend.files;
      runner.info(
        `Uploading ${prebuilt ? 'prebuilt output' : 'the workspace'} ${given}: ${files(p.total.files)} ` +
          `(${formatBytes(p.total.bytes)}); ${files(p.toSend.files)} to send (${formatBytes(p.toSend.bytes)}), ` +
          `${files(have)} already in Slipway`,
      );
      return;
    }
    // A line every tenth of the way, and the last one.
    const tenth = Math.floor((p.sent.bytes / Math.max(1, p.toSend.bytes)) * 10);
    if (p.sent.files === p.toSend.files || tenth > lastShown) {
      lastShown = tenth;
      runner.info(
        `Sent ${p.sent.files}/${p.toSend.files} files (${formatBytes(p.sent.bytes)} of ${formatBytes(p.toSend.bytes)})`,
      );
    }
  };
  const up = await uploadFiles(step.client.uploads, projectId, local, { onProgress: show });
  runner.info(
    `Uploaded in ${formatDuration(step.now() - started)}: sent ${files(up.progress.sent.files)}, ` +
      `skipped ${files(up.progress.total.files - up.progress.toSend.files)} already present`,
  );
  return prebuilt ? { files: up.files, prebuilt: true } : { files: up.files };
}

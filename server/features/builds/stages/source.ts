import type { Sandbox } from '../../../platform/sandbox/index.ts';
import { BuildCancelledError } from '../../../platform/sandbox/build-error.ts';
import { checkout } from '../checkout.ts';

export interface Commit {
  commitHash: string | null;
  commitMessage: string | null;
  author: string | null;
}

/**
 * The first stage: puts the source in the (empty) `src` folder, the uploaded files or a checkout
 * of the commit. Uploaded files have no commit.
 */
export async function sourceStage(p: {
  /** Uploaded files instead of a checkout: `write(dir)` returns the paths it made. */
  files?: { count: number; write(dir: string): Promise<string[]> };
  repositoryUrl: string;
  unreachableHint?: string;
  ref: string;
  commit: string | null;
  src: string;
  sandbox: Sandbox;
  info: (line: string) => void;
  timeoutMs: number;
  signal: AbortSignal;
  /** PATH git runs with. */
  path: string;
  /** Throws the error of a build stopped from outside (cancelled, or over its disk). */
  cancelled: () => never;
}): Promise<Commit> {
  if (p.files) {
    p.info(`==> Writing ${p.files.count} uploaded ${p.files.count === 1 ? 'file' : 'files'}`);
    await p.sandbox.prepare(await p.files.write(p.src));
    return { commitHash: null, commitMessage: null, author: null };
  }
  p.info('==> Cloning repository');
  return checkout({
    repositoryUrl: p.repositoryUrl,
    ...(p.unreachableHint ? { unreachableHint: p.unreachableHint } : {}),
    ref: p.ref,
    commit: p.commit,
    workspace: p.src,
    log: p.info,
    timeoutMs: p.timeoutMs,
    signal: p.signal,
    path: p.path,
    sandbox: p.sandbox,
  }).catch((err: unknown) => {
    if (err instanceof BuildCancelledError) p.cancelled();
    throw err;
  });
}

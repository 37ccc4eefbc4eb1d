import { chmod, mkdir } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import pLimit from 'p-limit';
import { BuildError } from '../../platform/sandbox/build-error.ts';
import type { SourceFile } from '../../platform/store/build-spec.ts';
import type { UploadStore } from './upload-store.ts';

/**
 * Writes a deployment's uploaded files into `dir` (which exists), with their modes, and returns
 * every directory and file it made (for the sandbox to own). The API has checked the paths; they
 * are checked again here, so no file lands outside `dir` whatever the row says.
 */
export async function materializeFiles(
  store: UploadStore,
  files: readonly SourceFile[],
  dir: string,
): Promise<string[]> {
  const limit = pLimit(8);
  const made = new Set<string>();
  await Promise.all(
    files.map((f) =>
      limit(async () => {
        const target = join(dir, f.path);
        const inside = relative(dir, target);
        if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..') {
          throw new BuildError(`The uploaded path ${f.path} is outside the deployment.`);
        }
        for (let d = dirname(target); d !== dir; d = dirname(d)) made.add(d);
        await mkdir(dirname(target), { recursive: true });
        if (!(await store.copyTo(f.sha256, target))) {
          throw new BuildError(
            `The uploaded file ${f.path} (${f.sha256.slice(0, 12)}...) is no longer stored: upload it again and redeploy.`,
          );
        }
        await chmod(target, f.mode);
        made.add(target);
      }),
    ),
  );
  return [...made];
}

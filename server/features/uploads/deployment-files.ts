import { ApiError } from '../../../api/errors.ts';
import type { DeploymentFile } from '../../../api/schemas/uploads.ts';
import type { SourceFile } from '../../platform/store/build-spec.ts';
import type { Deps } from '../../platform/deps/deps.ts';

/** Details shown for at most this many problem files; the message says how many there are in all. */
const SHOWN = 20;

/**
 * Checks a deployment's file list against the limits and against what the organization has
 * uploaded (each hash present, with the size given), and touches the uploads it uses. Throws a
 * VALIDATION_ERROR naming `files.<i>` for each problem; nothing is stored then.
 */
export async function checkDeploymentFiles(
  deps: Deps,
  organizationId: string,
  files: readonly DeploymentFile[],
): Promise<SourceFile[]> {
  const { maxFiles, maxBytes } = deps.config.uploads;
  if (files.length > maxFiles) {
    throw ApiError.validation([
      {
        path: 'files',
        message: `lists ${files.length} files, more than the limit of ${maxFiles} (SLIPWAY_MAX_UPLOAD_FILES)`,
      },
    ]);
  }
  const total = files.reduce((sum, f) => sum + f.size, 0);
  if (total > maxBytes) {
    throw ApiError.validation([
      {
        path: 'files',
        message: `add up to ${total} bytes, more than the limit of ${maxBytes} (SLIPWAY_MAX_UPLOAD_SIZE)`,
      },
    ]);
  }
  const sizes = new Map<string, number>();
  const hashes = [...new Set(files.map((f) => f.sha256))];
  for (let i = 0; i < hashes.length; i += 1000) {
    const rows = await deps.db
      .updateTable('uploaded_files')
      .set({ last_used_at: deps.clock.now().toISOString() })
      .where('organization_id', '=', organizationId)
      .where('sha256', 'in', hashes.slice(i, i + 1000))
      .returning(['sha256', 'size'])
      .execute();
    for (const r of rows) sizes.set(r.sha256, Number(r.size));
  }
  const problems: { path: string; message: string }[] = [];
  files.forEach((f, i) => {
    const size = sizes.get(f.sha256);
    if (size === undefined) {
      problems.push({
        path: `files.${i}.sha256`,
        message: `was not uploaded: PUT the bytes of ${f.path} first`,
      });
    } else if (size !== f.size) {
      problems.push({
        path: `files.${i}.size`,
        message: `is ${f.size}, but the uploaded file is ${size} bytes`,
      });
    }
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, SHOWN);
    if (problems.length > SHOWN) {
      shown.push({ path: 'files', message: `and ${problems.length - SHOWN} more files like these` });
    }
    throw ApiError.validation(shown);
  }
  return files.map((f) => ({
    path: f.path,
    sha256: f.sha256,
    size: f.size,
    mode: f.mode & 0o111 ? (0o755 as const) : (0o644 as const),
  }));
}

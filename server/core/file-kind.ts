/** What is at a path, links not followed: for checks that must not be led elsewhere by a link. */
import { lstat } from 'node:fs/promises';

/** Whether `path` is a directory (links not followed). */
export const isDir = (path: string): Promise<boolean> =>
  lstat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** Whether `path` is a regular file (links not followed). */
export const isFile = (path: string): Promise<boolean> =>
  lstat(path).then(
    (s) => s.isFile(),
    () => false,
  );

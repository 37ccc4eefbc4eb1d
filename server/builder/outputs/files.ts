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

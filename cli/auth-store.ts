import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Io } from './io.ts';

/** What `slipway login` saves. */
export const SavedAuth = z.object({ apiUrl: z.string().url(), token: z.string().min(1) });
export type SavedAuth = z.infer<typeof SavedAuth>;

/** `$SLIPWAY_CONFIG_DIR`, else `$XDG_CONFIG_HOME/slipway`, else `~/.config/slipway`. */
export function configDir(io: Pick<Io, 'env' | 'home'>): string {
  if (io.env.SLIPWAY_CONFIG_DIR) return io.env.SLIPWAY_CONFIG_DIR;
  if (io.env.XDG_CONFIG_HOME) return join(io.env.XDG_CONFIG_HOME, 'slipway');
  return join(io.home, '.config', 'slipway');
}

export const authFile = (io: Pick<Io, 'env' | 'home'>) => join(configDir(io), 'auth.json');

/** The saved login, or null when there is none; a damaged file is an error that names it. */
export async function readAuth(io: Pick<Io, 'env' | 'home'>): Promise<SavedAuth | null> {
  const file = authFile(io);
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const auth = SavedAuth.safeParse(parsed);
  if (!auth.success) throw new Error(`${file} is not a saved login: run \`slipway login\` again.`);
  return auth.data;
}

/**
 * Saves the login readable by its owner alone (0600 in a 0700 directory), replacing the file
 * in one step so a crash leaves the old login or the new one, never half of either.
 */
export async function writeAuth(io: Pick<Io, 'env' | 'home'>, auth: SavedAuth): Promise<string> {
  const dir = configDir(io);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = authFile(io);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(auth, null, 2)}\n`, { mode: 0o600 });
  // An existing file's mode is kept by rename's target only on some systems: set it.
  await chmod(temp, 0o600);
  await rename(temp, file);
  return file;
}

/** Removes the saved login; true when there was one. */
export async function removeAuth(io: Pick<Io, 'env' | 'home'>): Promise<boolean> {
  const file = authFile(io);
  const had = await readFile(file).then(
    () => true,
    () => false,
  );
  await rm(file, { force: true });
  return had;
}

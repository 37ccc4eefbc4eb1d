import { authFile, readAuth, removeAuth, writeAuth } from '../auth-store.ts';
import { flag, positionals, printJson, str, type Parsed } from '../command.ts';
import type { Io } from '../io.ts';
import { clientFor, normalizeApiUrl, openSession } from '../session.ts';
import { UsageError } from '../usage-error.ts';

/** The token: `--token`, else `SLIPWAY_TOKEN`, else standard input (asked for on a terminal). */
async function readToken(io: Io, given: string | undefined): Promise<string> {
  if (given) return given.trim();
  if (io.env.SLIPWAY_TOKEN) return io.env.SLIPWAY_TOKEN.trim();
  const text = (
    io.stdinIsTty ? await io.askSecret('API token (it is not shown as you type): ') : await io.readStdin()
  ).trim();
  if (!text) throw new UsageError('No token given: pipe it to standard input, or set SLIPWAY_TOKEN.');
  return text.split(/\s+/)[0]!;
}

export async function login(p: Parsed, io: Io): Promise<number> {
  positionals(p, []);
  const given = str(p, 'api-url') ?? io.env.SLIPWAY_API_URL ?? (await readAuth(io).catch(() => null))?.apiUrl;
  if (!given)
    throw new UsageError('Missing --api-url: the URL of your Slipway service, e.g. http://localhost:3000.');
  const apiUrl = normalizeApiUrl(given);
  const token = await readToken(io, str(p, 'token'));
  const user = await clientFor(apiUrl, token).user.get();
  const file = await writeAuth(io, { apiUrl, token });
  if (flag(p, 'json')) printJson(io, { apiUrl, email: user.email, file });
  else io.err(`Logged in to ${apiUrl} as ${user.email}. Saved in ${file}.\n`);
  return 0;
}

export async function logout(p: Parsed, io: Io): Promise<number> {
  positionals(p, []);
  const file = authFile(io);
  const had = await removeAuth(io);
  if (flag(p, 'json')) printJson(io, { loggedOut: had, file });
  else io.err(had ? `Logged out: removed ${file}.\n` : 'Not logged in: nothing to do.\n');
  return 0;
}

export async function whoami(p: Parsed, io: Io): Promise<number> {
  positionals(p, []);
  const session = await openSession(io);
  const user = await session.client.user.get();
  if (flag(p, 'json')) printJson(io, { apiUrl: session.apiUrl, ...user });
  else io.out(`${user.email}\n`);
  return 0;
}

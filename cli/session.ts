import { resolve } from 'node:path';
import { createClient, type SlipwayClient } from '../api/client/index.ts';
import { findProject } from '../api/client/find-project.ts';
import type { Project } from '../api/schemas/projects.ts';
import { readAuth } from './auth-store.ts';
import type { Io } from './io.ts';
import { findLink } from './link-store.ts';
import { UsageError } from './usage-error.ts';
import { VERSION } from './version.ts';

/** A client of the service the user logged in to. */
export interface Session {
  client: SlipwayClient;
  apiUrl: string;
}

/** The service's root without a trailing slash or `/v1`: what is saved and compared. */
export function normalizeApiUrl(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new Error(
      `--api-url must be the URL of a Slipway service, such as http://localhost:3000; got "${given}"`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`--api-url must start with http:// or https://; got "${given}"`);
  }
  return url.href.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** How long a command waits for the service's first answer before saying it cannot reach it. */
export const UNREACHABLE_AFTER_MS = 2500;

export const clientFor = (apiUrl: string, token: string) =>
  createClient({
    baseUrl: apiUrl,
    token,
    userAgent: `slipway-cli/${VERSION}`,
    baseUrlName: '--api-url (`slipway login --api-url <url>`) or SLIPWAY_API_URL',
    unreachableAfterMs: UNREACHABLE_AFTER_MS,
  });

/**
 * The service and token: `SLIPWAY_API_URL` and `SLIPWAY_TOKEN` when set (for scripts and CI),
 * else what `slipway login` saved.
 */
export async function openSession(io: Io): Promise<Session> {
  const saved = await readAuth(io);
  const token = io.env.SLIPWAY_TOKEN || saved?.token;
  const given = io.env.SLIPWAY_API_URL || saved?.apiUrl;
  if (!token || !given) {
    throw new Error(
      saved || io.env.SLIPWAY_TOKEN || io.env.SLIPWAY_API_URL
        ? 'Set both SLIPWAY_API_URL and SLIPWAY_TOKEN, or run `slipway login`.'
        : 'Not logged in: run `slipway login --api-url <url>` first (or set SLIPWAY_API_URL and SLIPWAY_TOKEN).',
    );
  }
  const apiUrl = normalizeApiUrl(given);
  return { client: clientFor(apiUrl, token), apiUrl };
}

/** `--project` and `--org` of the commands that act on a project. */
export interface ProjectFlags {
  project?: string;
  org?: string;
}

/**
 * The project a command acts on: `--project` (id or name, with `--org` when the name is in
 * several organizations), else the one `slipway link` remembered for `dir` or a folder above it.
 */
export async function targetProject(
  session: Session,
  io: Io,
  flags: ProjectFlags,
  dir = '.',
  /** What to do when no folder is linked (deploy offers to create a project); default an error. */
  unlinked?: () => Promise<Project>,
): Promise<Project> {
  if (flags.project) {
    return findProject(session.client, flags.project, flags.org, {
      who: 'you',
      orgHint: 'add --org',
    });
  }
  const found = await findLink(resolve(io.cwd, dir));
  if (!found && unlinked) return unlinked();
  if (!found) {
    throw new Error(
      `No project is linked to ${resolve(io.cwd, dir)}: run \`slipway link <project>\` there, or pass --project.`,
    );
  }
  if (found.link.apiUrl !== session.apiUrl) {
    throw new Error(
      `${found.root} is linked to a project on ${found.link.apiUrl}, but you are using ${session.apiUrl}: ` +
        'log in to that service, or run `slipway link` again.',
    );
  }
  return session.client.projects.get(found.link.projectId);
}

/** The organization to create in: --org (id or name), else your only one, else your personal one (the first). */
export async function organizationFor(
  session: Session,
  org: string | undefined,
): Promise<{ id: string; name: string }> {
  if (org) return session.client.organizations.get(org);
  const me = await session.client.user.get();
  const first = me.organizations[0];
  if (!first) throw new UsageError('You are in no organization: pass --org, or create one first.');
  return first;
}

/**
 * A project name from a folder's name: lowercase letters, digits and hyphens, 63 at most
 * (`My Site_v2` -> `my-site-v2`); `site` when nothing is left.
 */
export function projectNameFor(folder: string): string {
  const name = folder
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name || 'site';
}

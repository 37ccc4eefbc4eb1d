import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from './command.ts';

type ServerMain = typeof import('../server/main.ts');

/**
 * The service's TypeScript. From source (tsx, vitest) it imports as it is; the compiled CLI
 * (dist/cli) registers tsx first. Found from the checkout's root, since the two sit at
 * different depths, and named by a URL so the CLI's bundle never takes the server in.
 */
async function loadServer(): Promise<ServerMain> {
  let root = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(root, 'package.json'))) root = dirname(root);
  const url = pathToFileURL(join(root, 'server', 'main.ts')).href;
  if (!import.meta.url.endsWith('.ts')) (await import('tsx/esm/api')).register();
  return (await import(url)) as ServerMain;
}

/**
 * The service's own commands, run where the service runs and configured by its environment
 * (README.md). Their code loads only when one of them runs, so the people's commands start fast.
 */
const operator = (name: string, summary: string, help: string): Command => ({
  name,
  summary,
  help,
  async run(p) {
    const { main } = await loadServer();
    return main([name, ...p.positionals]);
  },
});

export const OPERATOR_COMMANDS: Command[] = [
  operator(
    'serve',
    'start the service',
    `Usage: slipway serve [--role api|worker|edge|bot]...

Starts the service: every role when none is given (and the bot's when its GitHub App is
configured), or only the roles named. Configuration comes from the environment; see README.md.

  slipway serve
  slipway serve --role api --role worker`,
  ),
  operator(
    'migrate',
    'apply database migrations and exit',
    `Usage: slipway migrate

Applies the database migrations this version needs (SLIPWAY_DATA_DIR's SQLite file, or
DATABASE_URL) and exits. \`slipway serve\` does the same when it starts.`,
  ),
  operator(
    'token',
    'create a user if needed and print a new API token',
    `Usage: slipway token create --email <address> [--name <label>] [--github-app]

Creates the user (with a personal organization) if the address is new, and prints a new API
token for them on standard output: the first token of a fresh service comes from here.
--github-app makes the GitHub App's own token (the bot's SLIPWAY_API_TOKEN): the only kind
the service lets store GitHub's deliveries in the App's event queue.

  slipway token create --email you@example.com --name laptop
  slipway token create --email slipway-bot@example.com --name github-app --github-app`,
  ),
  operator(
    'backup',
    'back up the database and artifacts while the service runs',
    `Usage: slipway backup <folder | s3://bucket/prefix> [--include-key] [--keep <n>]

Makes a consistent backup in a new folder inside <folder> (slipway-backup-<time>) while the
service runs: the database (SQLite's online backup, or pg_dump for PostgreSQL) and the
artifacts (built output and uploads; build caches are left out). Prints the new folder.
An s3:// URL (?endpoint=URL&region=NAME as SLIPWAY_OBJECT_STORAGE) puts the same folder in
that bucket, with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY as its credentials.
The encryption key stays out unless --include-key: keep it apart. --keep <n> removes all but
the n newest backups in <folder>. Run it with the service's environment.

  slipway backup /var/backups/slipway --keep 7
  slipway backup 's3://my-backups/slipway?region=eu-west-1' --keep 7`,
  ),
  operator(
    'restore',
    'restore a backup into an empty service',
    `Usage: slipway restore <backup-folder | its s3:// URL>

Restores a backup made by \`slipway backup\` into an empty SLIPWAY_DATA_DIR (or the empty
PostgreSQL database of DATABASE_URL) and its artifacts folder. The encryption key must be the
backed-up service's: SLIPWAY_ENCRYPTION_KEY, <data dir>/encryption.key, or the one in the
backup (--include-key). Then start the service with \`slipway serve\`.

  slipway restore /var/backups/slipway/slipway-backup-20261126T201500Z`,
  ),
  operator(
    'project',
    'stop or resume deploying and serving a project',
    `Usage: slipway project suspend|resume <project-id-or-name>

Suspending stops the project's deployments and its running server apps at once; resuming
lets it deploy and serve again.`,
  ),
  operator(
    'credits',
    "top up an organization's prepaid balance",
    `Usage: slipway credits add --org <name> --amount <dollars>

Adds prepaid credit for the paid API (/api/v1) to an organization, e.g. --amount 25.00.`,
  ),
  operator(
    'org',
    "set an organization's plan",
    `Usage: slipway org plan <organization-id-or-name> free|pro|enterprise

Sets the plan, and with it the rate limit of the organization's members.`,
  ),
];

import { parseArgs } from 'node:util';
import { loadConfig, type Config } from './platform/config.ts';
import { ConfigError } from './core/config-error.ts';
import { StartupError } from './core/startup-error.ts';
import { withoutPassword } from './token-command.ts';
import { BotSettingsError } from '../bot/settings.ts';
import { defaultRoles, serve, ROLES, type Role } from './serve.ts';
import { closeDeps, createDeps } from './runtime.ts';
import type { Deps } from './platform/deps/deps.ts';
import { createToken, findOrCreateUser, setOrganizationPlan } from './features/identity/index.ts';
import { setProjectStatus } from './features/deployments/index.ts';
import { Plan } from '../api/schemas/organizations.ts';
import { addCredits, formatCents, MAX_TOPUP_CENTS, parseAmount } from './features/billing/index.ts';
import pino from 'pino';
import { backupCommand, restoreCommand } from './features/backup/index.ts';

/** The service's own commands (cli/operator.ts): parse arguments, wire things up, return an exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    const run = command === undefined ? undefined : COMMANDS.get(command);
    if (!run) return fail(`Unknown command "${command}".`);
    return await run(rest);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof BotSettingsError || err instanceof StartupError) {
      return fail(err.message);
    }
    if (
      err instanceof Error &&
      'code' in err &&
      (err as { code: string }).code.startsWith('ERR_PARSE_ARGS')
    ) {
      return fail(err.message);
    }
    if (err instanceof Error && err.name === 'ApiError') return fail(err.message);
    throw err;
  }
}

/** `slipway serve [--role R]...` */
async function serveCommand(rest: string[]): Promise<number> {
  const { values } = parseArgs({ args: rest, options: { role: { type: 'string', multiple: true } } });
  const roles = values.role ?? [];
  const bad = roles.filter((r) => !ROLES.includes(r as Role));
  if (bad.length) return fail(`Unknown role "${bad[0]}": expected one of ${ROLES.join(', ')}`);
  await serve(loadConfig(), roles.length ? (roles as Role[]) : defaultRoles());
  return 0;
}

/** `slipway migrate` */
async function migrateCommand(): Promise<number> {
  const config = loadConfig();
  let applied: string[] = [];
  // Creating the deps migrates the database.
  await withDeps(
    config,
    async () => undefined,
    (names) => (applied = names),
  );
  process.stderr.write(`${migrateReport(applied, databaseName(config))}\n`);
  return 0;
}

/** `slipway token create --email E --name N [--github-app]` */
async function tokenCreateCommand(rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      'github-app': { type: 'boolean' },
    },
  });
  if (positionals[0] !== 'create')
    return fail('Usage: slipway token create --email E --name N [--github-app]');
  if (!values.email || !/^[^@\s]+@[^@\s]+$/.test(values.email)) {
    return fail('--email must be an e-mail address, e.g. --email you@example.com');
  }
  const email = values.email;
  const config = loadConfig();
  await withDeps(config, async (deps) => {
    const users = await deps.db.selectFrom('users').select('id').limit(1).execute();
    if (users.length === 0) {
      // A token in an empty database is a token for no running service, unless this is the first run.
      const where = databaseName(config);
      process.stderr.write(
        `slipway: note: the database at ${where} had no users: this token works only with a service that uses this same ${config.databaseUrl ? 'DATABASE_URL' : `SLIPWAY_DATA_DIR (${config.dataDir})`}\n`,
      );
    }
    const user = await findOrCreateUser(deps, email);
    // --github-app: the bot's SLIPWAY_API_TOKEN, the only kind that may use the App's event queue.
    const token = await createToken(deps, user.id, values.name ?? 'cli', undefined, {
      githubApp: values['github-app'] === true,
    });
    process.stdout.write(`${token.token}\n`);
  });
  return 0;
}

/** `slipway project suspend|resume <project>` */
async function projectCommand(rest: string[]): Promise<number> {
  const [action, target] = rest;
  if ((action !== 'suspend' && action !== 'resume') || !target) {
    return fail('Usage: slipway project suspend|resume <project-id-or-name>');
  }
  await withDeps(loadConfig(), async (deps) => {
    // On PostgreSQL every edge hears of it at once and stops the project's apps (closing the
    // store waits for the notification to go out); on SQLite the serving process notices
    // within a second.
    await setProjectStatus(deps, target, action === 'suspend' ? 'suspended' : 'active');
    process.stderr.write(`Project ${target} is ${action === 'suspend' ? 'suspended' : 'active'}.\n`);
  });
  return 0;
}

/** `slipway org plan <organization> <plan>` */
async function orgCommand(rest: string[]): Promise<number> {
  const [action, target, plan] = rest;
  const parsed = Plan.safeParse(plan);
  if (action !== 'plan' || !target || !parsed.success) {
    return fail(`Usage: slipway org plan <organization-id-or-name> ${Plan.options.join('|')}`);
  }
  await withDeps(loadConfig(), async (deps) => {
    const org = await setOrganizationPlan(deps, target, parsed.data);
    process.stderr.write(`Organization ${org.name} is on plan ${parsed.data} (was ${org.previous}).\n`);
  });
  return 0;
}

/** `slipway credits add --org NAME --amount 25.00` */
async function creditsCommand(rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { org: { type: 'string' }, amount: { type: 'string' } },
  });
  if (positionals[0] !== 'add' || !values.org) {
    return fail('Usage: slipway credits add --org NAME --amount 25.00');
  }
  const cents = parseAmount(values.amount ?? '');
  if (cents === null || cents <= 0 || cents > MAX_TOPUP_CENTS) {
    return fail(
      `--amount must be a positive amount in dollars with at most two decimals and at most ${formatCents(MAX_TOPUP_CENTS)}, e.g. --amount 25.00`,
    );
  }
  const org = values.org;
  await withDeps(loadConfig(), async (deps) => {
    const topUp = await addCredits(deps, org, cents, 'slipway credits add');
    process.stdout.write(
      `Added ${formatCents(cents)} USD to ${topUp.organization.name}; balance ${formatCents(topUp.balanceCents)} USD.\n`,
    );
  });
  return 0;
}

/** Each command by its name (a Map: a name such as `constructor` is no command). */
const COMMANDS = new Map<string, (rest: string[]) => Promise<number>>([
  ['serve', serveCommand],
  ['migrate', migrateCommand],
  ['token', tokenCreateCommand],
  ['project', projectCommand],
  ['org', orgCommand],
  ['credits', creditsCommand],
  ['backup', backupCommand],
  ['restore', restoreCommand],
]);

function fail(message: string): number {
  process.stderr.write(`slipway: ${message}\n`);
  return 2;
}

/** The database a command works on, for messages: its URL without the password, or the SQLite file. */
function databaseName(config: Config): string {
  return config.databaseUrl ? withoutPassword(config.databaseUrl) : `${config.dataDir}/slipway.db`;
}

/** What `slipway migrate` did, in words: created the schema, applied some, or nothing to do. */
export function migrateReport(applied: string[], where: string): string {
  if (applied.length === 0) return `The database ${where} is up to date: no migration to apply.`;
  const range = applied.length === 1 ? applied[0] : `${applied[0]} to ${applied.at(-1)}`;
  if (applied[0] === '001_initial') {
    return `Created Slipway's tables in ${where} (${applied.length} migrations, ${range}). Next: slipway serve`;
  }
  return `Applied ${applied.length} migration${applied.length === 1 ? '' : 's'} to ${where} (${range}).`;
}

/** Runs `fn` with the service's deps (the database migrated), closing the store whatever happens. */
async function withDeps(
  config: Config,
  fn: (deps: Deps) => Promise<void>,
  onMigrated?: (names: string[]) => void,
): Promise<void> {
  const deps = await createDeps(config, { log: quietLog(), ...(onMigrated ? { onMigrated } : {}) });
  try {
    await fn(deps);
  } finally {
    await closeDeps(deps);
  }
}

const quietLog = () => pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2));

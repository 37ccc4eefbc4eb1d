import { ApiError } from '../api/errors.ts';
import { asksForHelp, type Command, parse } from './command.ts';
import { completionCommand } from './commands/completion.ts';
import { deploy } from './commands/deploy.ts';
import { env } from './commands/env.ts';
import { hooks } from './commands/hooks.ts';
import { link } from './commands/link.ts';
import { login, logout, whoami } from './commands/login.ts';
import { logs } from './commands/logs.ts';
import { ls } from './commands/ls.ts';
import { open } from './commands/open.ts';
import { projects } from './commands/projects.ts';
import { promote } from './commands/promote.ts';
import { protection } from './commands/protection.ts';
import { redeploy } from './commands/redeploy.ts';
import { rollback } from './commands/rollback.ts';
import type { Io } from './io.ts';
import { OPERATOR_COMMANDS } from './operator.ts';
import { didYouMean } from './suggest.ts';
import { UsageError } from './usage-error.ts';
import { VERSION } from './version.ts';

const PEOPLE: Command[] = [
  login,
  logout,
  whoami,
  link,
  projects,
  deploy,
  ls,
  logs,
  open,
  redeploy,
  promote,
  rollback,
  env,
  hooks,
  protection,
  completionCommand(() => COMMANDS.values()),
];
/** Every command by name (test/repo/documented-commands.test.ts checks the docs against their --help). */
export const COMMANDS = new Map([...PEOPLE, ...OPERATOR_COMMANDS].map((c) => [c.name, c]));
const ALL = COMMANDS;

const column = (cs: Command[]) => cs.map((c) => `  ${c.name.padEnd(12)}${c.summary}`).join('\n');

export const HELP = `Usage: slipway <command> [options]

Deploy and manage (talk to a Slipway service; start with \`slipway login\`):
${column(PEOPLE)}

Run the service (where it runs; configured by the environment, see README.md):
${column(OPERATOR_COMMANDS)}

\`slipway <command> --help\` explains a command; --json makes a command print JSON for scripts.
\`slipway --version\` prints the version.`;

/** Runs one command line and returns the exit code: 0 done, 1 failed, 2 called wrongly. */
export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const about = name === 'help' && rest[0] ? ALL.get(rest[0]) : undefined;
    io.out(`${about?.help ?? HELP}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(`slipway ${VERSION}\n`);
    return 0;
  }
  const command = ALL.get(name);
  if (!command) {
    const guess = didYouMean(name, ALL.keys(), (c) => `\`slipway ${c}\``);
    io.err(`slipway: unknown command "${name}".${guess} Run \`slipway --help\` for the list.\n`);
    return 2;
  }
  // Help never runs anything, whatever else is on the line.
  if (asksForHelp(rest)) {
    io.out(`${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(parse(command, rest), io);
  } catch (err) {
    return report(err, command, io);
  }
}

/** Errors as one line of words: never a stack, unless SLIPWAY_DEBUG is set. */
function report(err: unknown, command: Command, io: Io): number {
  if (err instanceof UsageError) {
    io.err(`slipway ${command.name}: ${err.message}\nRun \`slipway ${command.name} --help\` for usage.\n`);
    return 2;
  }
  if (io.env.SLIPWAY_DEBUG && err instanceof Error) io.err(`${err.stack}\n`);
  if (err instanceof ApiError) {
    const hint = err.code === 'UNAUTHORIZED' ? ' Run `slipway login` with a valid token.' : '';
    io.err(`slipway: ${err.message}${hint}\n`);
    return 1;
  }
  io.err(`slipway: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Io } from './io.ts';
import { didYouMean } from './suggest.ts';
import { UsageError } from './usage-error.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What a command's `run` receives: its flags and positional arguments. */
export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** One `slipway <name>` command. */
export interface Command {
  name: string;
  /** One line in `slipway --help`. */
  summary: string;
  /** What `slipway <name> --help` prints. */
  help: string;
  /** Its flags; without them the arguments go to `run` as they are (the server's own commands). */
  options?: Options;
  run(args: Parsed, io: Io): Promise<number>;
}

/** Flags every people's command takes. */
export const COMMON: Options = { json: { type: 'boolean' } };

/** `--help` or `-h` before a `--`. */
export const asksForHelp = (argv: readonly string[]) => {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
};

/** Reads the arguments by the command's flags; a flag it does not know is a UsageError. */
export function parse(command: Command, argv: string[]): Parsed {
  if (!command.options) return { values: {}, positionals: argv };
  const options = { ...COMMON, ...command.options };
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values, positionals };
  } catch (err) {
    if (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      const said = err.message.split('. To specify')[0]!.replace(/\.?$/, '.');
      const unknown = /^Unknown option '--([^'=]+)/.exec(err.message)?.[1];
      const known = [...Object.keys(options), 'help'];
      throw new UsageError(unknown ? `${said}${didYouMean(unknown, known, (f) => `--${f}`)}` : said);
    }
    throw err;
  }
}

/** Every flag of a command, as typed: `--prod`, `-y`, with the common ones (for completion). */
export function flagsOf(command: Command): string[] {
  // The server's commands read their own flags: those their help names.
  if (!command.options) {
    return [...new Set([...command.help.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]).concat('--help'))];
  }
  const options: Options = { ...COMMON, ...command.options, help: { type: 'boolean', short: 'h' } };
  return Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
}

/** Typed readers of parsed flags. */
export const str = (p: Parsed, name: string): string | undefined => {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
};
export const flag = (p: Parsed, name: string): boolean => p.values[name] === true;

/** Exactly `max` positionals at most, each named in the error. */
export function positionals(p: Parsed, names: string[], required = 0): (string | undefined)[] {
  if (p.positionals.length > names.length) {
    throw new UsageError(`Unexpected argument "${p.positionals[names.length]}".`);
  }
  if (p.positionals.length < required) {
    throw new UsageError(`Missing <${names[p.positionals.length]}>.`);
  }
  return names.map((_, i) => p.positionals[i]);
}

/** Prints a value as the one JSON document of stdout. */
export const printJson = (io: Io, value: unknown) => io.out(`${JSON.stringify(value, null, 2)}\n`);

/** The sub-commands a command's usage lines name first (`ls|create`, `suspend|resume`), in order. */
export function subcommandsOf(command: Command): string[] {
  const usage = command.help.split('\n\n')[0]!;
  const subs = [...usage.matchAll(/^(?:Usage:)?\s*slipway \S+ ([a-z][a-z|-]*)(?=\s|$)/gm)].flatMap((m) =>
    m[1]!.split('|'),
  );
  return [...new Set(subs)];
}

import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Io } from './io.ts';
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
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...COMMON, ...command.options },
      allowPositionals: true,
      strict: true,
    });
    return { values, positionals };
  } catch (err) {
    if (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(err.message.split('. To specify')[0]!.replace(/\.?$/, '.'));
    }
    throw err;
  }
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

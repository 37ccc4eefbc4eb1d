import { type Command, type Parsed, positionals } from '../command.ts';
import { completionScript, SHELLS } from '../completion-scripts.ts';
import type { Io } from '../io.ts';
import { UsageError } from '../usage-error.ts';

export async function completion(p: Parsed, io: Io, commands: Iterable<Command>): Promise<number> {
  const [shell] = positionals(p, ['shell'], 1);
  if (!(shell! in SHELLS)) {
    throw new UsageError(`The shell must be one of ${Object.keys(SHELLS).join(', ')}; got "${shell}".`);
  }
  io.out(completionScript(shell as keyof typeof SHELLS, commands));
  return 0;
}

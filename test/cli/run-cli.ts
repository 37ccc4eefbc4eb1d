import { main } from '../../cli/main.ts';
import type { Io } from '../../cli/io.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a test gives the CLI: its folder, home and environment, and standard input. */
export interface CliPlace {
  cwd: string;
  home: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
  /** Standard input is a terminal, and these are the lines typed at each question. */
  terminal?: { answers: string[] };
}

/**
 * Runs the people's CLI in this process (as bin/slipway.js does, with captured streams), so it
 * can talk to a stack served by this process without blocking it.
 */
export async function runCli(argv: string[], place: CliPlace): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    out: (t) => void (stdout += t),
    err: (t) => void (stderr += t),
    readStdin: async () => place.stdin ?? '',
    stdinIsTty: place.terminal !== undefined,
    askSecret: () => Promise.reject(new Error('no terminal in tests')),
    askLine: async (prompt) => {
      stderr += prompt;
      const answer = place.terminal?.answers.shift();
      if (answer === undefined) throw new Error(`nothing typed at "${prompt}"`);
      stderr += `${answer}\n`;
      return answer;
    },
    errIsTty: false,
    env: { SLIPWAY_CONFIG_DIR: `${place.home}/.config/slipway`, ...place.env },
    cwd: place.cwd,
    home: place.home,
    interruptible: (work) => work(new AbortController().signal),
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

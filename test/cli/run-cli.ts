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
    stdinIsTty: false,
    askSecret: () => Promise.reject(new Error('no terminal in tests')),
    errIsTty: false,
    env: { SLIPWAY_CONFIG_DIR: `${place.home}/.config/slipway`, ...place.env },
    cwd: place.cwd,
    home: place.home,
    interruptible: (work) => work(new AbortController().signal),
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

import { homedir } from 'node:os';
import { createInterface } from 'node:readline/promises';

/** What a command touches outside itself; tests give their own. */
export interface Io {
  /** Results: a URL, a table, JSON. */
  out(text: string): void;
  /** Progress, logs and errors. */
  err(text: string): void;
  /** The whole of standard input (login reads a token from it). */
  readStdin(): Promise<string>;
  /** Whether standard input is a terminal (then login asks for the token). */
  stdinIsTty: boolean;
  /** Asks on the terminal for a line that is not echoed (a token). */
  askSecret(prompt: string): Promise<string>;
  /** Asks on the terminal for a line, shown as typed (a yes or no). */
  askLine(prompt: string): Promise<string>;
  /** Whether standard error is a terminal (then progress rewrites one line). */
  errIsTty: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  home: string;
  /**
   * Runs `work` with a signal that Ctrl-C aborts (instead of quitting), for work that can stop
   * cleanly: following a log.
   */
  interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/** The real process's streams and environment. */
export function processIo(): Io {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stdinIsTty: Boolean(process.stdin.isTTY),
    askSecret,
    askLine,
    errIsTty: Boolean(process.stderr.isTTY),
    env: process.env,
    cwd: process.cwd(),
    home: homedir(),
    interruptible: async (work) => {
      const controller = new AbortController();
      const onInterrupt = () => controller.abort();
      process.once('SIGINT', onInterrupt);
      try {
        return await work(controller.signal);
      } finally {
        process.off('SIGINT', onInterrupt);
      }
    },
  };
}

/** Reads one line from the terminal in raw mode, echoing nothing; Ctrl-C cancels. */
function askSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  let value = '';
  return new Promise((done, fail) => {
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error) fail(error);
      else done(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003' || ch === '\u0004') return finish(new Error('Cancelled.'));
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** Reads one line from the terminal, the prompt on standard error (standard output stays for results). */
async function askLine(prompt: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(prompt);
  } finally {
    rl.close();
  }
}

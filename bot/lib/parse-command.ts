/** The commands the bot answers in pull request comments. */
export type Command = 'preview' | 'promote' | 'rollback' | 'help';

/**
 * The command a comment gives, read from its first line only, so a comment that quotes or
 * mentions a command further down does not run it.
 */
export function parseCommand(body: string): Command | null {
  const first = (body.trimStart().split(/\r?\n/, 1)[0] ?? '').trim().toLowerCase();
  if (/^\/slipway\s+help\b/.test(first) || first === '/slipway') return 'help';
  const m = /^\/(preview|promote|rollback)(?:\s|$)/.exec(first);
  return m ? (m[1] as Command) : null;
}

/** The word after the command on the first line (`/rollback dpl_abc` gives `dpl_abc`), if any. */
export function commandArgument(body: string): string | undefined {
  const first = (body.trimStart().split(/\r?\n/, 1)[0] ?? '').trim();
  return first.split(/\s+/)[1];
}

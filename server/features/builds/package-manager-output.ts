/**
 * What package managers print when an install fails, made readable: npm follows a usage error
 * (a lockfile out of date, say) with ~90 lines of the command's usage text, which buries the
 * reason; and the usual causes get a one-line hint saying what to do.
 */

/** Drops npm's usage text (`npm error Usage:` to `Run "npm help ..." for more info`) from a stream of lines. */
export function createUsageFilter(): (line: string) => string | null {
  let inUsage = false;
  return (line) => {
    if (!inUsage && /^npm (error|ERR!) Usage:$/.test(line)) {
      inUsage = true;
      return null;
    }
    if (inUsage) {
      if (!/^npm (error|ERR!)/.test(line)) {
        inUsage = false;
        return line;
      }
      if (/^npm (error|ERR!) Run "npm help [\w-]+" for more info$/.test(line)) {
        inUsage = false;
        return "npm error (npm's usage text left out)";
      }
      return null;
    }
    return line;
  };
}

const HINTS: [RegExp, string][] = [
  [
    /`npm ci` can only install packages when your package\.json and package-lock\.json/,
    'package-lock.json does not match package.json: run `npm install` and commit package-lock.json.',
  ],
  [
    /ERR_PNPM_OUTDATED_LOCKFILE|pnpm-lock\.yaml is not up to date/,
    'pnpm-lock.yaml does not match package.json: run `pnpm install` and commit pnpm-lock.yaml.',
  ],
  [
    /YN0028|lockfile needs to be updated, but yarn was run with `--frozen-lockfile`/,
    'yarn.lock does not match package.json: run `yarn install` and commit yarn.lock.',
  ],
  [
    /lockfile had changes, but lockfile is frozen/,
    'bun.lock does not match package.json: run `bun install` and commit the lockfile.',
  ],
];

/** A one-line hint for a failed install from its last lines, or null. */
export function installHint(output: readonly string[]): string | null {
  const text = output.join('\n');
  return HINTS.find(([pattern]) => pattern.test(text))?.[1] ?? null;
}

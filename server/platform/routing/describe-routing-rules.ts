import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeBytes } from '../../core/format.ts';
import type { DeploymentRuntime } from '../store/deployment-runtime.ts';
import { HEADERS_FILE, MAX_RULES_FILE_BYTES, REDIRECTS_FILE } from './load-rules.ts';
import { parseHeaders } from './parse-headers.ts';
import { parseRedirects } from './parse-redirects.ts';
import type { RuleWarning } from './rule-warning.ts';
import { rulesFolderOf } from './rules-folder.ts';

/** Bad lines the build log lists per file; the rest are counted. */
const LOGGED_WARNINGS = 50;

type Read = { text: string } | { problem: string } | null;

/** A rules file's text, why it is not read, or null when there is none. Follows what storing the artifact does. */
async function readRulesFile(path: string, name: string): Promise<Read> {
  const stat = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  });
  if (!stat) return null;
  // The artifact store leaves links and special files out, so the edge would never see them.
  if (stat.isSymbolicLink())
    return { problem: `${name} is a symbolic link, which is not published: its rules do not apply` };
  if (!stat.isFile()) return { problem: `${name} is not a file: ignored` };
  if (stat.size > MAX_RULES_FILE_BYTES) {
    return { problem: `${name} is larger than ${describeBytes(MAX_RULES_FILE_BYTES)}, the limit: ignored` };
  }
  return { text: await readFile(path, 'utf8') };
}

function warningLines(name: string, warnings: RuleWarning[]): string[] {
  const lines = warnings.slice(0, LOGGED_WARNINGS).map((w) => `${name} line ${w.line} skipped: ${w.message}`);
  const rest = warnings.length - LOGGED_WARNINGS;
  if (rest > 0) lines.push(`${name}: ${rest} more bad lines skipped, not listed here`);
  return lines;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * What the build log says of a build output's `_redirects` and `_headers` (in the folder
 * rulesFolderOf(runtime) picks; static output's root by default): how many rules the edge will
 * apply, then each bad line with its number and why it is skipped. Nothing when neither file
 * exists. Bad lines never fail a build.
 */
export async function describeRoutingRules(
  outputDir: string,
  opts: { runtime?: Pick<DeploymentRuntime, 'kind'> } = {},
): Promise<string[]> {
  const dir = join(outputDir, rulesFolderOf(opts.runtime ?? { kind: 'static' }));
  const [redirectsFile, headersFile] = await Promise.all([
    readRulesFile(join(dir, REDIRECTS_FILE), REDIRECTS_FILE),
    readRulesFile(join(dir, HEADERS_FILE), HEADERS_FILE),
  ]);
  if (!redirectsFile && !headersFile) return [];
  const problems: string[] = [];
  const from: string[] = [];
  let redirects = 0;
  let headers = 0;
  if (redirectsFile && 'problem' in redirectsFile) problems.push(redirectsFile.problem);
  if (redirectsFile && 'text' in redirectsFile) {
    const parsed = parseRedirects(redirectsFile.text);
    redirects = parsed.rules.length;
    from.push(REDIRECTS_FILE);
    problems.push(...warningLines(REDIRECTS_FILE, parsed.warnings));
  }
  if (headersFile && 'problem' in headersFile) problems.push(headersFile.problem);
  if (headersFile && 'text' in headersFile) {
    const parsed = parseHeaders(headersFile.text);
    headers = parsed.rules.length;
    from.push(HEADERS_FILE);
    problems.push(...warningLines(HEADERS_FILE, parsed.warnings));
  }
  const summary =
    `Routing rules: ${plural(redirects, 'redirect', 'redirects')}, ${plural(headers, 'header rule', 'header rules')}` +
    (from.length > 0 ? ` from ${from.join(' and ')}` : '');
  return [summary, ...problems];
}

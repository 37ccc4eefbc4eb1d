import { compileRules, NO_RULES, type RoutingRules } from './match-rules.ts';
import { parseHeaders } from './parse-headers.ts';
import { parseRedirects } from './parse-redirects.ts';

/** The two files, at the top of the rules folder. */
export const REDIRECTS_FILE = '_redirects';
export const HEADERS_FILE = '_headers';

/**
 * A rules file larger than this is ignored whole (the build log says so). Cloudflare's limits
 * make about 2 MB of rules at most, but real files are a few kilobytes, and the edge reads and
 * parses them on a deployment's first request.
 */
export const MAX_RULES_FILE_BYTES = 1024 * 1024;

/** A file of an artifact as its manifest lists it. */
interface FileEntry {
  hash: string;
  size: number;
}

/** A manifest's rules files in `folder` (see rulesFolderOf); neither is the common case. */
export function rulesFilesOf(
  files: Readonly<Record<string, FileEntry>>,
  folder: string,
): { redirects: FileEntry | undefined; headers: FileEntry | undefined } {
  const at = (name: string) => {
    const path = `${folder}/${name}`;
    return Object.hasOwn(files, path) ? files[path] : undefined;
  };
  return { redirects: at(REDIRECTS_FILE), headers: at(HEADERS_FILE) };
}

const utf8 = new TextDecoder('utf-8');

/**
 * Reads, parses and compiles a deployment's rules files; `bytes` is what they took as stored (the
 * manifest cache counts it). The warnings are the build log's business, not the edge's.
 */
export async function loadRoutingRules(
  found: { redirects: FileEntry | undefined; headers: FileEntry | undefined },
  read: (file: FileEntry) => Promise<Uint8Array>,
): Promise<{ rules: RoutingRules; bytes: number }> {
  const text = async (file: FileEntry | undefined) =>
    file && file.size <= MAX_RULES_FILE_BYTES ? utf8.decode(await read(file)) : '';
  const [redirects, headers] = await Promise.all([text(found.redirects), text(found.headers)]);
  if (redirects === '' && headers === '') return { rules: NO_RULES, bytes: 0 };
  const rules = compileRules(parseRedirects(redirects).rules, parseHeaders(headers).rules);
  return { rules, bytes: redirects.length + headers.length };
}

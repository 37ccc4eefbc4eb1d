/** Where a repository URL makes git read from. */
export type RepositoryLocation =
  /** A directory on the build machine: a `file://` URL (percent-decoded, as git does) or a bare path. */
  | { kind: 'local'; path: string }
  /**
   * A host git connects to: `host` is a name, an IPv4 address or a bare IPv6 address; `port` the
   * one written in the URL, or null for the scheme's default.
   */
  | { kind: 'network'; host: string; port: number | null }
  /** Not a form git reads here; `message` says which forms are. */
  | { kind: 'invalid'; message: string };

const FORMS =
  'must be an https, http, ssh, git or file URL, an scp-like address such as ' +
  'git@github.com:owner/repo.git, or an absolute path';

const NO_HOST = 'must name a host, such as https://github.com/owner/repo.git';

const NETWORK_SCHEMES = new Set(['http', 'https', 'git', 'ssh']);

/** `%41` -> `A`, byte-wise and UTF-8 decoded; a `%` without two hex digits stays, as git leaves it. */
function percentDecode(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const hex = bytes[i] === 0x25 ? bytes.subarray(i + 1, i + 3).toString('latin1') : '';
    if (/^[0-9a-f]{2}$/i.test(hex)) {
      out.push(parseInt(hex, 16));
      i += 2;
    } else {
      out.push(bytes[i]!);
    }
  }
  return Buffer.from(out).toString('utf8');
}

/**
 * The host as the resolver will see it. Git and ssh hand hosts to getaddrinfo, which reads
 * `2130706433` or `0x7f.1` as 127.0.0.1; the WHATWG parser does the same for http URLs only, so
 * every host is parsed as an http one to compare addresses, not spellings.
 */
function normalizeHost(host: string): string | null {
  try {
    const hostname = new URL(`http://${host}/`).hostname;
    return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  } catch {
    return null;
  }
}

/**
 * Reads a repository URL the way the checkout hands it to git: `scheme://` URLs, the scp-like
 * `user@host:path` the checkout passes through, and absolute paths. Anything else (a relative
 * path, which would depend on the server's working directory, or a transport such as `ext::`)
 * is invalid. `file://` URLs are parsed as git parses them, not as browsers do: git keeps `?`
 * and `#` in the path and decodes `%2f`, so a WHATWG parse could name another directory.
 */
export function parseRepositoryUrl(url: string): RepositoryLocation {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url);
  if (scheme) {
    const name = scheme[1]!.toLowerCase();
    const rest = url.slice(scheme[0].length);
    if (name === 'file') {
      const slash = rest.indexOf('/');
      if (slash < 0)
        return { kind: 'invalid', message: 'a file:// URL needs a path, such as file:///srv/git/web.git' };
      const host = rest.slice(0, slash);
      if (host !== '' && host.toLowerCase() !== 'localhost') {
        return {
          kind: 'invalid',
          message: `a file:// URL must not name a host (${host}): write file:///path`,
        };
      }
      return local(percentDecode(rest.slice(slash)));
    }
    if (!NETWORK_SCHEMES.has(name)) return { kind: 'invalid', message: `${FORMS} (not ${name}://)` };
    // Parsers disagree about these (is `\` a path separator or part of the user name?); git's
    // and curl's reading must not differ from the one checked here.
    if (/[\s\\\p{Cc}]/u.test(url)) {
      return { kind: 'invalid', message: 'must not contain spaces, backslashes or control characters' };
    }
    if (/^[/?#]/.test(rest)) return { kind: 'invalid', message: NO_HOST };
    let parsed: URL;
    try {
      parsed = new URL(`http://${rest}`);
    } catch {
      return { kind: 'invalid', message: 'is not a valid URL' };
    }
    const host = normalizeHost(parsed.hostname);
    if (!host) return { kind: 'invalid', message: NO_HOST };
    // Parsed as http, whose default port 80 the parser drops: read it back from the text.
    const written = /^(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):(\d+)/.exec(rest);
    return { kind: 'network', host, port: written ? Number(written[1]) : null };
  }
  if (url.startsWith('/')) return local(url);
  // The scp-like form as the checkout recognizes it, with a user: it reads a bare `host:path` as a
  // relative path. git then connects to the host before the colon.
  const scp = /^[\w.-]+@([\w.-]+):/.exec(url);
  if (scp) {
    const host = normalizeHost(scp[1]!);
    return host ? { kind: 'network', host, port: null } : { kind: 'invalid', message: FORMS };
  }
  return { kind: 'invalid', message: FORMS };
}

function local(path: string): RepositoryLocation {
  if (!path.startsWith('/')) return { kind: 'invalid', message: FORMS };
  if (path.includes('\0'))
    return { kind: 'invalid', message: 'a local path must not contain NUL characters' };
  return { kind: 'local', path };
}

import type { Manifest, ManifestFile } from './artifact-reader.ts';
import { extensionOf } from './content-types.ts';

/** The manifest entry a request path serves, and with which status. */
export interface Match {
  path: string;
  file: ManifestFile;
  status: 200 | 404;
}

/**
 * Maps a decoded request path to a file of the manifest: `/` -> `/index.html`, `/about` ->
 * `/about.html` or `/about/index.html`; then, for single-page apps, an extensionless path falls
 * back to `/index.html`; otherwise the app's own `/404.html` answers 404. Only manifest keys can
 * ever match, which is what keeps `..` and friends from reaching the disk.
 */
export function matchPath(manifest: Manifest, path: string, spa: boolean): Match | null {
  const files = manifest.files;
  if (isPrivatePath(path) || isRulesFile(path)) {
    return files['/404.html'] ? { path: '/404.html', file: files['/404.html'], status: 404 } : null;
  }
  const found = fileFor(files, path);
  if (found) return found;
  if (spa && extensionOf(path) === '' && files['/index.html']) {
    return { path: '/index.html', file: files['/index.html'], status: 200 };
  }
  if (files['/404.html']) return { path: '/404.html', file: files['/404.html'], status: 404 };
  return null;
}

/**
 * The file a path names by itself, without fallbacks: `/about` -> `/about`, `/about.html` or
 * `/about/index.html`; `/docs/` -> `/docs/index.html` or `/docs.html`. What a `_redirects` rule
 * without `!` gives way to. Private paths are the caller's to refuse.
 */
function fileFor(files: Manifest['files'], path: string): Match | null {
  // Tried in order; written out rather than as a list, which every request would build.
  return path.endsWith('/')
    ? (fileAt(files, `${path}index.html`) ??
        (path === '/' ? null : fileAt(files, `${path.slice(0, -1)}.html`)))
    : (fileAt(files, path) ?? fileAt(files, `${path}.html`) ?? fileAt(files, `${path}/index.html`));
}

/** Whether a file exists at a path for `_redirects` shadowing: one a request for it would get with 200. */
export function fileExistsAt(files: Manifest['files'], path: string): boolean {
  return !isPrivatePath(path) && !isRulesFile(path) && fileFor(files, path) !== null;
}

/**
 * The routing rules files of a static deployment (its artifact's root: rulesFolderOf), which the
 * edge reads and never serves.
 */
export function isRulesFile(path: string): boolean {
  return path === '/_redirects' || path === '/_headers';
}

/** The manifest's file at exactly `path` as a 200 match; only its own keys count. */
export function fileAt(files: Manifest['files'], path: string): Match | null {
  const file = Object.hasOwn(files, path) ? files[path] : undefined;
  return file ? { path, file, status: 200 } : null;
}

/**
 * Files a build output may hold by accident and must never publish: anything in a `.git`
 * directory (the repository's history, remotes, credentials in `.git/config`) and `.env` files
 * (`.env`, `.env.local`, `.env.production`...), at any depth. They answer as if absent.
 */
export function isPrivatePath(path: string): boolean {
  // Every segment refused here starts with a dot; most paths have no such segment at all.
  if (!path.startsWith('.') && !path.includes('/.')) return false;
  return path
    .toLowerCase()
    .split('/')
    .some((segment) => segment === '.git' || segment === '.env' || segment.startsWith('.env.'));
}

/** The path of a request URL, percent-decoded; null when it cannot be decoded. */
export function requestPath(url: string | undefined): string | null {
  let raw = url ?? '/';
  if (!raw.startsWith('/')) {
    // Absolute-form (`GET http://host/path`), which proxies send.
    try {
      raw = new URL(raw).pathname;
    } catch {
      return null;
    }
  }
  const query = raw.indexOf('?');
  const fragment = raw.indexOf('#');
  const end = fragment !== -1 && (query === -1 || fragment < query) ? fragment : query;
  if (end !== -1) raw = raw.slice(0, end);
  // Without a `%` there is nothing to decode, and nothing that could fail to.
  if (!raw.includes('%')) return raw.includes('\0') ? null : raw;
  try {
    const path = decodeURIComponent(raw);
    return path.includes('\0') ? null : path;
  } catch {
    return null;
  }
}

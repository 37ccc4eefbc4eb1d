/** The dashboard's own address: where its pages live, to check a return path against. */
export interface DashboardPlace {
  /** The dashboard's origin (`https://slipway.example.com`). */
  origin: string;
  /** Path prefix (the path of SLIPWAY_PUBLIC_API_URL), no trailing slash. */
  base: string;
}

/** Where a path went: `path` is safe to send as `Location`; `refused` says a given one was not. */
export interface ReturnPath {
  path: string;
  refused: boolean;
}

/**
 * Without SLIPWAY_PUBLIC_API_URL the dashboard's origin is whatever host the browser used. A
 * path-absolute reference (what `next` must be) resolves to the origin it is resolved against,
 * whichever that is, so a placeholder origin decides exactly as the real one would.
 */
export const PLACEHOLDER_ORIGIN = 'http://dashboard.invalid';

/**
 * Characters a browser's URL parser drops or reads as something else: C0 controls and DEL
 * (tab, CR and LF are removed anywhere, so `/\t/evil.com` becomes `//evil.com`), and the
 * backslash (read as `/` in http(s) URLs, so `/\evil.com` is `//evil.com`).
 */
// eslint-disable-next-line no-control-regex -- these characters are exactly what is refused
const MISREAD = /[\u0000-\u001f\u007f\\]/;

/**
 * Where to go after signing in (`?next=`, the sign-in form's `next`, the GitHub sign-in's state):
 * a page of this dashboard, never another site. `next` is parsed by the WHATWG URL parser against
 * the dashboard's origin, as a browser resolves `Location`, and kept only when it is a path
 * (one leading `/`, no scheme, no `//host`), has nothing the parser would drop or misread, and
 * stays on the dashboard's origin under its path. Anything else gives the dashboard's home.
 * What is answered is the parsed URL's own path, query and fragment, checked once more the same
 * way, so what the browser follows is exactly what was checked.
 */
export function returnPath(next: string | undefined, place: DashboardPlace): ReturnPath {
  const home = `${place.base}/`;
  if (next === undefined || next === '') return { path: home, refused: false };
  const refuse = { path: home, refused: true };
  if (MISREAD.test(next) || !next.startsWith('/') || next.startsWith('//')) return refuse;
  let url: URL;
  try {
    url = new URL(next, place.origin);
  } catch {
    return refuse;
  }
  if (url.origin !== place.origin || url.username !== '' || url.password !== '') return refuse;
  if (!(url.pathname === place.base || url.pathname.startsWith(home))) return refuse;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // `/.//evil.com` parses to the path `//evil.com`, which as a Location names another host.
  if (path.startsWith('//') || new URL(path, place.origin).origin !== place.origin) return refuse;
  return { path, refused: false };
}

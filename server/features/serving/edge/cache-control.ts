export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'public, max-age=0, must-revalidate';

/**
 * True when a file name carries a content hash (`app-3f2a1b9c.js`, `index.B2xKq9aZ.js`,
 * `main.3f2a1b9c.chunk.js`): such a name changes whenever its bytes do, so browsers may keep it
 * forever. A segment counts as a hash when it is 8+ base64url characters mixing letters and
 * digits, or 8-12 mixing cases (a quarter of Vite's 8-character hashes have no digit), or exactly
 * 8 of esbuild's upper-case base32 characters after a `-` in a script or style name (Angular's
 * `main-KQWERTYU.js`: a fifth of them have no digit), so plain words like `application.js` or
 * `my-ButtonComponent.js` stay revalidated.
 */
export function isHashedName(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (/\.html?$/i.test(name)) return false;
  // Bundlers put the hash after a `-` or `.`; base64url hashes may themselves contain `-` or `_`.
  for (let i = 0; i < name.length; i++) {
    if (name[i] !== '-' && name[i] !== '.') continue;
    const rest = name.slice(i + 1);
    const end = rest.indexOf('.');
    if (end >= 8 && looksRandom(rest.slice(0, end))) return true;
    if (name[i] === '-' && /^[A-Z2-7]{8}\.(?:m?js|css)$/.test(rest)) return true;
  }
  return false;
}

function looksRandom(segment: string): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(segment)) return false;
  const digits = /[0-9]/.test(segment);
  const lower = /[a-z]/.test(segment);
  const upper = /[A-Z]/.test(segment);
  return (digits && (lower || upper)) || (lower && upper && segment.length <= 12);
}

/**
 * Folders whose every file a framework names by its content (or by its build), whatever the
 * name looks like: Next.js's `/_next/static` (Turbopack's names are all hash, `1ruwogm2e1-5s.css`),
 * SvelteKit's `/_app/immutable`, Astro's `/_astro`, SolidStart's (vinxi's) `/_build/assets`, Nuxt's
 * `/_nuxt` but for its `builds` folder (the manifest of the latest build, which changes under the
 * same name).
 */
function inImmutableFolder(path: string): boolean {
  if (
    path.startsWith('/_next/static/') ||
    path.startsWith('/_app/immutable/') ||
    path.startsWith('/_astro/') ||
    path.startsWith('/_build/assets/')
  ) {
    return true;
  }
  return path.startsWith('/_nuxt/') && !path.startsWith('/_nuxt/builds/');
}

/** Cache-Control for a file served from an artifact. */
export function cacheControlFor(path: string): string {
  return inImmutableFolder(path) || isHashedName(path) ? IMMUTABLE : REVALIDATE;
}

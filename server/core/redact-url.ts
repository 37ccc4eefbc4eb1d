/**
 * Query parameters whose values are credentials wherever they appear: `?token=`, `access_token`,
 * `api_key`, `X-Amz-Signature`, `client_secret`, `password`, `code` (OAuth), `sig`...
 */
const SECRET_PARAM = /token|secret|passw|pwd|key|sig|auth|credential|session|^code$/i;

/** Tokens recognisable by their prefix (Slipway's and GitHub's), wherever they are in a URL. */
const TOKEN = /\b(slw|slwh|slwb|slws|ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_-]+/g;

/**
 * A deploy hook's URL is `/v1/hooks/deploy/<hook id>.<secret>`: whatever follows the id is taken
 * for a secret (a mistyped or guessed one too); the id alone says which hook was called.
 */
const DEPLOY_HOOK = /(\/hooks\/deploy\/)([^/?#]*)/g;
const hookKey = (_: string, path: string, key: string) => {
  const id = /^dph_[A-Za-z0-9]+(?=\.)/.exec(key);
  return `${path}${id ? `${id[0]}.` : ''}***`;
};

/**
 * A URL as it may be logged or shown: the `user:password@` of an absolute URL, the values of
 * query parameters that carry credentials, a deploy hook's secret, and anything shaped like a
 * Slipway or GitHub token are replaced with `***`. Works on absolute URLs and on request targets (`/path?query`) alike, and
 * keeps everything else as it was written (no re-encoding), so the line still reads as the request.
 */
export function redactUrl(url: string): string {
  let out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, '$1***@').replace(DEPLOY_HOOK, hookKey);
  const q = out.indexOf('?');
  if (q >= 0) {
    const hash = out.indexOf('#', q);
    const end = hash < 0 ? out.length : hash;
    const query = out
      .slice(q + 1, end)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq < 0) return pair;
        let name = pair.slice(0, eq);
        try {
          name = decodeURIComponent(name.replace(/\+/g, ' '));
        } catch {
          // A malformed escape: judge the name as written.
        }
        return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=***` : pair;
      })
      .join('&');
    out = `${out.slice(0, q + 1)}${query}${out.slice(end)}`;
  }
  return out.replace(TOKEN, '$1_***');
}

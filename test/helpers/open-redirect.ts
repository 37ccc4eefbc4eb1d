/**
 * Known ways to smuggle another site through a "return to" parameter, for a host `evil`
 * (`evil.example`, or `127.0.0.1:<port>` of a server that counts visits). Each is the value
 * as the server reads it, after the query or form is decoded.
 */
export const redirectPayloads = (evil: string): string[] => [
  // The URL parser drops tab, CR and LF anywhere: `/\t/host` is `//host`.
  `/\t/${evil}/x`,
  `/\n/${evil}/x`,
  `/\r\n/${evil}/x`,
  `/\t\t/${evil}/x`,
  `\t//${evil}/x`,
  // Leading spaces and C0 controls are trimmed.
  ` //${evil}/x`,
  `\u0000//${evil}/x`,
  // A backslash is a slash in http(s) URLs.
  `/\\${evil}/x`,
  `\\\\${evil}/x`,
  `\\/${evil}/x`,
  `/\\/${evil}/x`,
  // Scheme-relative and absolute.
  `//${evil}/x`,
  `///${evil}/x`,
  `https://${evil}/x`,
  `http://${evil}/x`,
  `https:${evil}/x`,
  `https:/${evil}/x`,
  `HTTPS://${evil}/x`,
  `javascript:alert(document.domain)//`,
  `data:text/html,<script>alert(1)</script>`,
  // Paths that normalize to `//host`.
  `/.//${evil}/x`,
  `/..//${evil}/x`,
  `/x/..//${evil}/x`,
  `/%2e//${evil}/x`,
  // Encoded slashes: harmless (a page of the dashboard's own that does not exist), never decoded into `//`.
  `/%2F%2F${evil}/x`,
  `/%5C${evil}/x`,
  // A literal `%09` (the query said `%2509`): also stays a path of the dashboard.
  `/%09/${evil}`,
];

/** The same attacks as an attacker writes them in a link: the raw query, not yet decoded. */
export const rawRedirectQueries = (evil: string): string[] => [
  `/%09/${evil}/x`,
  `/%0a/${evil}/x`,
  `/%0D%0A/${evil}/x`,
  `%09//${evil}/x`,
  `/%5C${evil}/x`,
  `%5C%5C${evil}/x`,
  `//${evil}/x`,
  `%2F%2F${evil}/x`,
  `https:${evil}/x`,
];

/**
 * The origin a browser goes to when it follows `location` from a page of `origin`: the WHATWG
 * URL parser (Node's `URL`, as in browsers), resolving the header against the page.
 */
export function followedOrigin(location: unknown, origin: string): string {
  return new URL(String(location), origin).origin;
}

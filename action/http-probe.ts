import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** What one probe saw: an HTTP status, or why there was none. */
export type ProbeResult = { status: number; protected?: boolean } | { error: string };

/** The header Slipway's edge answers a protected host's visitors with when it wants them to sign in. */
export const PROTECTION_ANSWER_HEADER = 'x-slipway-protection';

/**
 * GETs a URL and reports the status (and whether the edge asked to sign in instead of serving
 * it); injectable so the health check can be tested without a network.
 */
export type Probe = (
  url: string,
  timeoutMs: number,
  headers?: Record<string, string>,
) => Promise<ProbeResult>;

/** `localhost` and its sub-domains, which RFC 6761 reserves for the loopback address. */
const isLocalhost = (hostname: string) => hostname === 'localhost' || hostname.endsWith('.localhost');

/**
 * GETs `url` and resolves with its status, never throwing. A host under `.localhost` (the
 * deployment URLs of a service run on one machine) is reached at 127.0.0.1 with the URL's Host
 * header: not every resolver maps those names, and fetch() cannot set Host. Redirects are not
 * followed: a 3xx is an answer.
 */
export const httpProbe: Probe = (url, timeoutMs, headers = {}) =>
  new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ error: `not a URL: ${url}` });
      return;
    }
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const local = isLocalhost(target.hostname);
    const req = request(
      {
        host: local ? '127.0.0.1' : target.hostname,
        port: target.port || (target.protocol === 'https:' ? 443 : 80),
        path: `${target.pathname}${target.search}`,
        method: 'GET',
        headers: { ...headers, host: target.host, 'user-agent': 'slipway-action health check' },
        ...(local ? { servername: target.hostname } : {}),
        timeout: timeoutMs,
      },
      (res) => {
        // The body does not matter, but it must be read for the socket to be released.
        res.resume();
        const status = res.statusCode ?? 0;
        res.on('end', () =>
          resolve(res.headers[PROTECTION_ANSWER_HEADER] ? { status, protected: true } : { status }),
        );
        res.on('error', (err) => resolve({ error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });

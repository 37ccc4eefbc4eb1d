import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from '../../core/ssrf.ts';

/**
 * Sends one delivery and answers the receiver's status code. `addresses` are what the SSRF
 * check approved; the request connects only to them.
 */
export type PostDelivery = (req: {
  url: URL;
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  body: Buffer;
  signal: AbortSignal;
}) => Promise<number>;

/**
 * A `lookup` for node:net that answers the checked addresses instead of asking DNS again. The
 * host name still goes into `Host` and into TLS (SNI and certificate checks), so https works as
 * usual; only the address is fixed. Node asks with `all: true` when it races IPv4 and IPv6.
 */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const candidates = family ? addresses.filter((a) => a.family === family) : addresses;
    const first = candidates[0];
    if (!first) {
      const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${family} address`);
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
    } else if (options.all) {
      callback(null, candidates);
    } else {
      callback(null, first.address, first.family);
    }
  };
}

/**
 * POSTs with node:http(s) to the pinned addresses. A fresh connection each time (no agent): a
 * pooled socket might have been opened to an address some earlier, different answer gave.
 * Redirects are not followed (a 3xx is a failed attempt), since following one would reach an
 * address nobody checked. Resolves at the response headers; the body is drained and ignored.
 */
export const postPinned: PostDelivery = ({ url, addresses, headers, body, signal }) =>
  new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        lookup: pinnedLookup(addresses),
        headers: { ...headers, 'Content-Length': String(body.length), Connection: 'close' },
        signal,
      },
      (res) => {
        res.resume();
        res.on('error', () => undefined);
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });

/** The transport over an injected `fetch` (tests). It cannot pin the address, so the SSRF check is only advisory there. */
export function postWithFetch(fetchImpl: typeof fetch): PostDelivery {
  return async ({ url, headers, body, signal }) => {
    const res = await fetchImpl(url, { method: 'POST', headers, body, signal, redirect: 'manual' });
    await res.body?.cancel();
    return res.status;
  };
}

import { isIPv4 } from 'node:net';
import type { DnsRecord } from '../../../../api/schemas/domains.ts';
import type { Config } from '../../../platform/config.ts';

/** Name of the TXT record that proves ownership of `domain`. */
export const challengeName = (domain: string) => `_slipway-challenge.${domain}`;

/** Placeholder when the edge's address is not known from the configuration. */
export const EDGE_ADDRESS_HINT = 'the IP address of your Slipway edge';

/** The host name the edge is reached at: SLIPWAY_PUBLIC_EDGE_URL's host when set, else SLIPWAY_DOMAIN. */
function edgeBaseHost(config: Pick<Config, 'domain' | 'publicEdgeUrl'>): string {
  return config.publicEdgeUrl ? new URL(config.publicEdgeUrl).hostname : config.domain;
}

/**
 * Records to set at the DNS provider: the ownership TXT, then a CNAME to the project's production
 * host for a sub-domain, or an A record for an apex (a CNAME is not allowed at a zone apex).
 * Without a public suffix list, a name of two labels counts as the apex; `shop.co.uk`-style
 * apexes get a CNAME, which providers with CNAME flattening accept.
 */
export function dnsRecordsFor(
  config: Pick<Config, 'domain' | 'publicEdgeUrl'>,
  productionHost: string,
  domain: string,
  token: string,
): DnsRecord[] {
  const txt: DnsRecord = { type: 'TXT', name: challengeName(domain), value: token };
  const base = edgeBaseHost(config);
  const edgeIp = isIPv4(base) ? base : null;
  const apex = domain.split('.').length === 2;
  // A CNAME cannot point at an IP address: with an IP edge, every domain gets an A record.
  if (apex || edgeIp) {
    return [txt, { type: 'A', name: domain, value: edgeIp ?? EDGE_ADDRESS_HINT }];
  }
  return [txt, { type: 'CNAME', name: domain, value: `${productionHost}.${base}` }];
}

/** True when `domain` is the service's own domain or under it, where deployment hosts live. */
export function isServiceDomain(config: Pick<Config, 'domain' | 'publicEdgeUrl'>, domain: string): boolean {
  return [config.domain, edgeBaseHost(config)].some((own) => domain === own || domain.endsWith(`.${own}`));
}

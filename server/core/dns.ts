import { Resolver } from 'node:dns/promises';

/** The DNS look-ups the service makes, injected so tests can point them at a local server. */
export interface Dns {
  resolveTxt(name: string): Promise<string[][]>;
}

/** Uses SLIPWAY_DNS_SERVERS (`1.1.1.1`, `127.0.0.1:5353`) when set, else the system's resolvers. */
export function createDns(servers: string[] | undefined): Dns {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (servers?.length) resolver.setServers(servers);
  return { resolveTxt: (name) => resolver.resolveTxt(name) };
}

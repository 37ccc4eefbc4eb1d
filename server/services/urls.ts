import type { Config } from '../config.ts';

/** How deployment and production URLs are written. */
export interface Urls {
  /** URL for a host label (`<label>.<SLIPWAY_DOMAIN>[:edge port]`). */
  forHost(label: string): string;
  /** Base URL of the API, for links in logs and comments. */
  api: string;
}

export function createUrls(
  config: Pick<Config, 'domain' | 'edgePort' | 'publicEdgeUrl' | 'publicApiUrl' | 'port'>,
): Urls {
  return {
    forHost(label) {
      if (config.publicEdgeUrl) {
        const u = new URL(config.publicEdgeUrl);
        return `${u.protocol}//${label}.${u.host}`;
      }
      const port = config.edgePort === 80 ? '' : `:${config.edgePort}`;
      return `http://${label}.${config.domain}${port}`;
    },
    api: config.publicApiUrl ?? `http://localhost:${config.port}`,
  };
}

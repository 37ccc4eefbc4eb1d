import type { Config } from '../config.ts';

/** How deployment and production URLs are written. */
export interface Urls {
  /** URL for a host label (`<label>.<SLIPWAY_DOMAIN>[:edge port]`). */
  forHost(label: string): string;
  /** Base URL of the API, for links in logs and comments. */
  readonly api: string;
  /**
   * The port the API listens on, once it does: without SLIPWAY_PUBLIC_API_URL links name it, so a
   * service started with PORT=0 (a free port) never links to `localhost:0`.
   */
  listening(port: number): void;
}

export function createUrls(
  config: Pick<Config, 'domain' | 'edgePort' | 'publicEdgeUrl' | 'publicApiUrl' | 'port'>,
): Urls {
  let port = config.port;
  return {
    forHost(label) {
      if (config.publicEdgeUrl) {
        const u = new URL(config.publicEdgeUrl);
        return `${u.protocol}//${label}.${u.host}`;
      }
      const port = config.edgePort === 80 ? '' : `:${config.edgePort}`;
      return `http://${label}.${config.domain}${port}`;
    },
    get api() {
      return config.publicApiUrl ?? `http://localhost:${port}`;
    },
    listening(actual) {
      port = actual;
    },
  };
}

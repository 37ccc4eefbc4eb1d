import type { getOctokit } from '@actions/github';

/** The Octokit of @actions/github: REST methods and pagination. */
export type Octokit = ReturnType<typeof getOctokit>;

/** owner/repo of the calls. */
export interface Repo {
  owner: string;
  repo: string;
}

/** How often a call GitHub failed with a 5xx (or a network error) is tried again. */
export const GITHUB_RETRIES = 3;
/** Rate limits: the longest wait GitHub may ask for that the step sits out, and how many times. */
export const RATE_LIMIT_MAX_WAIT_S = 60;
export const RATE_LIMIT_RETRIES = 2;

export interface OctokitOptions {
  /** Told each time a rate limit makes a call wait or give up. */
  log: (message: string) => void;
  /**
   * Milliseconds per unit of wait: retries wait 1, 4, 9 units, a rate limit its Retry-After in
   * seconds (default 1000; tests shorten it).
   */
  waitUnitMs?: number;
}

/**
 * An Octokit for `baseUrl` (the runner's GITHUB_API_URL: api.github.com, a GitHub Enterprise
 * Server, or a local stand-in in tests) that rides out GitHub's bad moments: a 5xx or a dropped
 * connection is tried again up to GITHUB_RETRIES times (after 1, 4 and 9 s), and a rate limit
 * (403 or 429 with Retry-After, or an exhausted quota until its reset) is waited out when GitHub
 * asks for at most RATE_LIMIT_MAX_WAIT_S; writes are spaced a second apart, as GitHub asks.
 * @actions/github and the plugins are loaded only here, when a GitHub call is due: they are most
 * of the bundle, and the first request to Slipway should not wait for them.
 */
export async function createOctokit(token: string, baseUrl: string, opts: OctokitOptions): Promise<Octokit> {
  const [{ getOctokit }, { retry }, { throttling }] = await Promise.all([
    import('@actions/github'),
    import('@octokit/plugin-retry'),
    import('@octokit/plugin-throttling'),
  ]);
  const unit = opts.waitUnitMs ?? 1000;
  const onLimit =
    (kind: string) =>
    (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
      const call = `${request.method} ${request.url}`;
      if (retryCount < RATE_LIMIT_RETRIES && retryAfter <= RATE_LIMIT_MAX_WAIT_S) {
        opts.log(`GitHub's ${kind} holds ${call}: trying again in ${retryAfter} s.`);
        return true;
      }
      opts.log(`GitHub's ${kind} holds ${call} for ${retryAfter} s: not waiting that long.`);
      return false;
    };
  return getOctokit(
    token,
    {
      baseUrl,
      userAgent: 'slipway-action',
      retry: { retries: GITHUB_RETRIES, retryAfterBaseValue: unit },
      throttle: {
        retryAfterBaseValue: unit,
        onRateLimit: onLimit('rate limit'),
        onSecondaryRateLimit: onLimit('secondary rate limit'),
      },
    },
    retry,
    throttling,
  );
}

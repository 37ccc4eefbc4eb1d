import type { FetchLike } from '../api/client/index.ts';
import { createClient } from '../api/client/index.ts';
import { backoffDelay, defaultSleep, isRetryableStatus } from '../api/client/retry.ts';
import { ApiError } from '../api/errors.ts';
import { loadCore } from './core.ts';
import type { Inputs } from './inputs.ts';

/** Why a job without api-token cannot ask for an OIDC token, in the workflow's words. */
export const NO_ID_TOKEN =
  'No api-token, and this job cannot ask GitHub for an OIDC token: give the job `permissions: id-token: write` (and a trust policy to the project: see docs/action.md#deploy-without-a-stored-token), or set api-token';

/** Exchanges tried before the step fails, each with a new OIDC token. */
export const EXCHANGE_ATTEMPTS = 5;
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 10_000;

/**
 * Without an api-token: asks GitHub for the job's OIDC token (for `oidc-audience`) and exchanges
 * it for a short-lived Slipway token of the project, which the project's trust policy decides.
 *
 * The service exchanges each OIDC token once (its `jti`), so an exchange whose answer was lost (a
 * reset connection, a proxy's 502 after the service answered) cannot be sent again as it was: the
 * token may already be used. Each attempt asks the runner for a new OIDC token instead (GitHub
 * gives one per request, each with its own `jti`), and the client never resends one. A lost
 * answer costs an unused short-lived token on the service, which expires on its own.
 */
export async function exchangeForToken(
  inputs: Pick<Inputs, 'apiUrl' | 'oidcAudience' | 'project'>,
  deps: {
    env: NodeJS.ProcessEnv;
    fetch?: FetchLike | undefined;
    userAgent: string;
    getIdToken?: ((audience: string) => Promise<string>) | undefined;
    sleep?: ((ms: number) => Promise<void>) | undefined;
    /** Says why an attempt is tried again (the job log). */
    log?: ((message: string) => void) | undefined;
  },
): Promise<{ token: string; projectId: string }> {
  if (!deps.getIdToken && !deps.env.ACTIONS_ID_TOKEN_REQUEST_URL) throw new Error(NO_ID_TOKEN);
  // @actions/core is loaded here, before the first request, only for a job without a token.
  const getIdToken = deps.getIdToken ?? (await loadCore()).getIDToken;
  const sleep = deps.sleep ?? defaultSleep;
  const client = createClient({
    baseUrl: inputs.apiUrl,
    userAgent: deps.userAgent,
    baseUrlName: 'the api-url input',
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    const idToken = await getIdToken(inputs.oidcAudience);
    try {
      const exchanged = await client.oidc.exchange({ token: idToken, project: inputs.project });
      return { token: exchanged.token, projectId: exchanged.projectId };
    } catch (err) {
      // A network failure is a 503 of the client's own; 429 and 5xx from a proxy or a busy service.
      const again = err instanceof ApiError && isRetryableStatus(err.status);
      if (!again || attempt >= EXCHANGE_ATTEMPTS) throw err;
      deps.log?.(
        `The exchange of the job's OIDC token failed (${err.message}); asking the runner for a new OIDC token and trying again (attempt ${attempt + 1} of ${EXCHANGE_ATTEMPTS}).`,
      );
      await sleep(backoffDelay(attempt, FIRST_DELAY_MS, MAX_DELAY_MS, Math.random));
    }
  }
}

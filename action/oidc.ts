import type { FetchLike } from '../api/client/index.ts';
import { createClient } from '../api/client/index.ts';
import { loadCore } from './core.ts';
import type { Inputs } from './inputs.ts';

/** Why a job without api-token cannot ask for an OIDC token, in the workflow's words. */
export const NO_ID_TOKEN =
  'No api-token, and this job cannot ask GitHub for an OIDC token: give the job `permissions: id-token: write` (and a trust policy to the project: see docs/action.md#deploy-without-a-stored-token), or set api-token';

/**
 * Without an api-token: asks GitHub for the job's OIDC token (for `oidc-audience`) and exchanges
 * it for a short-lived Slipway token of the project, which the project's trust policy decides.
 */
export async function exchangeForToken(
  inputs: Pick<Inputs, 'apiUrl' | 'oidcAudience' | 'project'>,
  deps: {
    env: NodeJS.ProcessEnv;
    fetch?: FetchLike | undefined;
    userAgent: string;
    getIdToken?: ((audience: string) => Promise<string>) | undefined;
  },
): Promise<{ token: string; projectId: string }> {
  if (!deps.getIdToken && !deps.env.ACTIONS_ID_TOKEN_REQUEST_URL) throw new Error(NO_ID_TOKEN);
  // @actions/core is loaded here, before the first request, only for a job without a token.
  const getIdToken = deps.getIdToken ?? (await loadCore()).getIDToken;
  const idToken = await getIdToken(inputs.oidcAudience);
  const client = createClient({
    baseUrl: inputs.apiUrl,
    userAgent: deps.userAgent,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const exchanged = await client.oidc.exchange({ token: idToken, project: inputs.project });
  return { token: exchanged.token, projectId: exchanged.projectId };
}

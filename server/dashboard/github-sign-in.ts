import { exchangeWebFlowCode, getWebFlowAuthorizationUrl } from '@octokit/oauth-methods';
import { request as octokitRequest } from '@octokit/request';
import type { Deps } from '../platform/deps/deps.ts';
import { findOrCreateUser } from '../features/identity/index.ts';

/**
 * Sign in with GitHub: GitHub's web flow with the GitHub App's OAuth client (its client id and
 * secret come with the App's registration). The account is matched to a Slipway user by a
 * verified e-mail address; a new user is made only when the operator allows sign-ups by e-mail
 * domain or GitHub organization (SLIPWAY_GITHUB_SIGN_UP).
 */
export interface GitHubSignIn {
  clientId: string;
  clientSecret: string;
  /** GitHub's REST API (GITHUB_API_URL); the web flow's pages are on the matching web host. */
  apiUrl: string;
  /** E-mail domains (`example.com`) and GitHub organizations (`org:acme`) whose people may sign up. */
  signUp: { domains: string[]; orgs: string[] };
}

export function githubSignIn(config: Deps['config']): GitHubSignIn | null {
  return config.githubSignIn ?? null;
}

const requestFor = (cfg: GitHubSignIn) =>
  octokitRequest.defaults({ baseUrl: cfg.apiUrl, headers: { 'user-agent': 'slipway-dashboard' } });

export function authorizationUrl(cfg: GitHubSignIn, redirectUrl: string, state: string): string {
  return getWebFlowAuthorizationUrl({
    clientType: 'github-app',
    clientId: cfg.clientId,
    redirectUrl,
    state,
    request: requestFor(cfg),
  }).url;
}

export class SignInRefused extends Error {}

/** The Slipway user a GitHub sign-in's code belongs to, or why there is none (SignInRefused). */
export async function userForCode(
  deps: Deps,
  cfg: GitHubSignIn,
  code: string,
  redirectUrl: string,
): Promise<{ id: string; email: string }> {
  const request = requestFor(cfg);
  let token: string;
  try {
    const { authentication } = await exchangeWebFlowCode({
      clientType: 'github-app',
      clientId: cfg.clientId,
      clientSecret: cfg.clientSecret,
      code,
      redirectUrl,
      request,
    });
    token = authentication.token;
  } catch (err) {
    throw new SignInRefused(`GitHub did not accept the sign-in: ${(err as Error).message}`);
  }
  const auth = { headers: { authorization: `token ${token}` } };
  const emails = await request('GET /user/emails', { ...auth, per_page: 100 }).then(
    (res) => res.data,
    (err: unknown) => {
      const status = (err as { status?: number }).status;
      // 403 "Resource not accessible by integration": the App was not given the permission.
      if (status === 403 || status === 404) {
        throw new SignInRefused(
          'GitHub did not let Slipway read your e-mail addresses, which it needs to know who you are. ' +
            'The server\'s operator must give its GitHub App the "Email addresses" account permission (read-only); ' +
            'until then, sign in with an API token.',
        );
      }
      throw new SignInRefused(
        `GitHub did not answer when Slipway asked for your e-mail addresses (${status ? `status ${status}` : (err as Error).message}); try again in a moment.`,
      );
    },
  );
  const verified = emails
    .filter((e) => e.verified)
    .sort((a, b) => Number(b.primary) - Number(a.primary))
    .map((e) => e.email.toLowerCase());
  if (verified.length === 0) {
    throw new SignInRefused(
      'Your GitHub account has no verified e-mail address; verify one on GitHub and try again.',
    );
  }
  const existing = await deps.db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('email', 'in', verified)
    .execute();
  // The primary address wins when several match.
  const match = verified.map((e) => existing.find((u) => u.email === e)).find(Boolean);
  if (match) return match;

  const byDomain = verified.find((e) => cfg.signUp.domains.includes(e.split('@')[1]!));
  let allowed = byDomain;
  if (!allowed && cfg.signUp.orgs.length > 0) {
    const { data: orgs } = await request('GET /user/orgs', { ...auth, per_page: 100 });
    if (orgs.some((o) => cfg.signUp.orgs.includes(o.login.toLowerCase()))) allowed = verified[0];
  }
  if (!allowed) {
    throw new SignInRefused(
      `No Slipway user has the e-mail address ${verified[0]}; ask an admin to invite you, or sign in with an API token.`,
    );
  }
  const user = await findOrCreateUser(deps, allowed);
  return { id: user.id, email: user.email };
}

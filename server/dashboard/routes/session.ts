import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { authenticate } from '../../platform/http/auth.ts';
import { ASSETS, asset, type AssetName } from '../assets.ts';
import type { Kit } from '../kit.ts';
import { signInPage } from '../pages/sign-in.ts';
import {
  authorizationUrl,
  githubSignIn,
  SignInRefused,
  userForCode,
  type GitHubSignIn,
} from '../github-sign-in.ts';
import {
  PLACEHOLDER_ORIGIN,
  returnPath,
  closeSession,
  cookieValue,
  openSession,
  readSession,
  sessionCookie,
} from '../../features/identity/index.ts';

const STATE_COOKIE = 'slipway_github_state';

/** What the sign-in page says when a link's `next` would have left the dashboard. */
export const REFUSED_NEXT =
  'The link you followed asked to go to another site after signing in: you will go to this dashboard’s home page instead.';

/** Sign in with an API token, sign out, and the one script and style sheet. */
export function sessionRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps, base } = kit;
  const place = {
    origin: deps.config.publicApiUrl ? new URL(deps.config.publicApiUrl).origin : PLACEHOLDER_ORIGIN,
    base,
  };
  const gh = githubSignIn(deps.config);
  const signIn: SignIn = { returnTo: (next) => returnPath(next, place), gh, github: gh !== null };
  assetRoute(scope);
  tokenSignInRoutes(scope, kit, signIn);
  gitHubStartRoute(scope, kit, signIn);
  gitHubCallbackRoute(scope, kit, signIn);
  signOutRoute(scope, kit);
}

/** What the sign-in routes share. */
interface SignIn {
  /** Where to go after signing in: a path of this dashboard, never another site (return-path.ts). */
  returnTo: (next: string | undefined) => ReturnType<typeof returnPath>;
  /** GitHub sign-in's settings, null when it is not set up. */
  gh: GitHubSignIn | null;
  /** Whether the sign-in page offers GitHub. */
  github: boolean;
}

/** The dashboard's script and style sheet: kept for good when asked for by hash, compressed when the browser can. */
function assetRoute(scope: FastifyInstance): void {
  scope.get('/assets/:name', async (req, reply) => {
    const name = (req.params as { name: string }).name;
    if (!Object.hasOwn(ASSETS, name)) return reply.status(404).type('text/plain').send('Not found');
    const a = asset(name as AssetName);
    const immutable = (req.query as { v?: string }).v === a.hash;
    void reply
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('etag', `"${a.hash}"`)
      .header('vary', 'accept-encoding')
      .header('x-content-type-options', 'nosniff')
      .type(a.type);
    if (req.headers['if-none-match'] === `"${a.hash}"`) return reply.status(304).send();
    const accept = String(req.headers['accept-encoding'] ?? '');
    if (/\bbr\b/.test(accept)) return reply.header('content-encoding', 'br').send(a.br);
    if (/\bgzip\b/.test(accept)) return reply.header('content-encoding', 'gzip').send(a.gzip);
    return reply.send(a.body);
  });
}

/** The sign-in page, and its form: an API token of the user's own opens a session. */
function tokenSignInRoutes(scope: FastifyInstance, kit: Kit, { returnTo, github }: SignIn): void {
  const { deps, base, secure } = kit;
  scope.get('/sign-in', async (req, reply) => {
    const q = req.query as { next?: string; signed_out?: string };
    const { path: next, refused } = returnTo(q.next);
    if (await readSession(deps, req.headers.cookie)) return reply.redirect(next, 303);
    const message = q.signed_out ? 'You are signed out.' : refused ? REFUSED_NEXT : undefined;
    return kit.send(
      reply,
      signInPage({ base, session: null }, { next, github, ...(message ? { message } : {}) }),
    );
  });

  scope.post('/sign-in', async (req, reply) => {
    const form: Record<string, string | undefined> =
      req.body instanceof URLSearchParams ? Object.fromEntries(req.body) : {};
    const next = returnTo(form.next).path;
    const view = { base, session: null };
    if (!kit.sameOrigin(req)) {
      return kit.send(
        reply,
        signInPage(view, { next, github, error: 'Sign in from this dashboard’s own page.' }),
        403,
      );
    }
    const token = (form.token ?? '').trim();
    try {
      if (!token) throw new ApiError('UNAUTHORIZED', 'Enter an API token (it starts with slw_).');
      const { actor } = await authenticate(deps, `Bearer ${token}`);
      if (actor.scope) {
        throw new ApiError(
          'FORBIDDEN',
          'A token from a GitHub Actions trust policy cannot sign in: use a token of your own.',
        );
      }
      const { secret, expiresAt } = await openSession(deps, actor.userId, actor.tokenId);
      return reply
        .header('set-cookie', sessionCookie(secret, { path: base || '/', secure, expires: expiresAt }))
        .redirect(next, 303);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return kit.send(reply, signInPage(view, { next, github, error: err.message }), 401);
    }
  });
}

/** The path, under the dashboard's, of the GitHub sign-in: its state cookie is sent only there. */
const STATE_PATH = '/sign-in/github';

/** Where GitHub sends the browser back: under the public URL (it must match the App's callback URL). */
const callbackUrl = (kit: Kit, req: FastifyRequest) =>
  `${kit.deps.config.publicApiUrl?.replace(/\/+$/, '') ?? `${req.protocol}://${req.headers.host ?? 'localhost'}`}/sign-in/github/callback`;

/** Sign in with GitHub: a state cookie for this browser, then off to GitHub's authorization page. */
function gitHubStartRoute(scope: FastifyInstance, kit: Kit, { returnTo, gh }: SignIn): void {
  const { base, secure } = kit;
  scope.get('/sign-in/github', async (req, reply) => {
    if (!gh) return reply.redirect(`${base}/sign-in`, 303);
    const next = returnTo((req.query as { next?: string }).next).path;
    const state = randomBytes(24).toString('base64url');
    const cookie = [
      `${STATE_COOKIE}=${state}.${Buffer.from(next).toString('base64url')}`,
      `Path=${base}${STATE_PATH}`,
      'HttpOnly',
      'SameSite=Lax',
      'Max-Age=600',
      ...(secure ? ['Secure'] : []),
    ].join('; ');
    return reply
      .header('set-cookie', cookie)
      .redirect(authorizationUrl(gh, callbackUrl(kit, req), state), 303);
  });
}

/** GitHub's answer: the state must be this browser's; the code names the user, who gets a session. */
function gitHubCallbackRoute(scope: FastifyInstance, kit: Kit, { returnTo, gh, github }: SignIn): void {
  const { deps, base, secure } = kit;
  scope.get('/sign-in/github/callback', async (req, reply) => {
    const view = { base, session: null };
    if (!gh) return reply.redirect(`${base}/sign-in`, 303);
    const q = req.query as { code?: string; state?: string; error_description?: string };
    const [state, nextB64] = (cookieValue(req.headers.cookie, STATE_COOKIE) ?? '').split('.');
    const next = returnTo(nextB64 ? Buffer.from(nextB64, 'base64url').toString() : undefined).path;
    const clear = `${STATE_COOKIE}=; Path=${base}${STATE_PATH}; HttpOnly; SameSite=Lax; Max-Age=0`;
    const refuse = (error: string, status: number) =>
      kit.send(reply.header('set-cookie', clear), signInPage(view, { next, github, error }), status);
    // The state proves this browser started the sign-in: without it a sign-in could be forced on
    // someone, and anyone's link could put its own words on this page as GitHub's.
    const given = Buffer.from(q.state ?? '');
    const expected = Buffer.from(state ?? '');
    if (!state || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return refuse('The sign-in with GitHub expired or was not started here; try again.', 400);
    }
    if (q.error_description) return refuse(`GitHub: ${q.error_description}`, 401);
    if (!q.code) return refuse('GitHub sent no sign-in code; try again.', 400);
    try {
      const user = await userForCode(deps, gh, q.code, callbackUrl(kit, req));
      const { secret, expiresAt } = await openSession(deps, user.id, null);
      return reply
        .header('set-cookie', [
          clear,
          sessionCookie(secret, { path: base || '/', secure, expires: expiresAt }),
        ])
        .redirect(next, 303);
    } catch (err) {
      if (err instanceof SignInRefused) return refuse(err.message, 403);
      throw err;
    }
  });
}

/** Sign out: the session ends, its cookie is cleared. */
function signOutRoute(scope: FastifyInstance, kit: Kit): void {
  const { deps, base, secure } = kit;
  scope.post(
    '/sign-out',
    kit.page(async ({ reply, session }) => {
      await closeSession(deps, session.idHash);
      return reply
        .header('set-cookie', sessionCookie('', { path: base || '/', secure }))
        .redirect(`${base}/sign-in?signed_out=1`, 303);
    }),
  );
}

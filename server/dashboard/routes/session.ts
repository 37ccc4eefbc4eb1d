import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import { authenticate } from '../../http/auth.ts';
import { ASSETS, asset, type AssetName } from '../assets.ts';
import type { Kit } from '../kit.ts';
import { signInPage } from '../pages/sign-in.ts';
import { closeSession, openSession, readSession, sessionCookie } from '../session.ts';

/** Where to go after signing in: a path of this dashboard, never another site. */
export function safeNext(base: string, next: string | undefined): string {
  const home = `${base}/`;
  if (!next || !next.startsWith(home) || next.startsWith('//') || /[\\\r\n]/.test(next)) return home;
  return next;
}

/** Sign in with an API token, sign out, and the one script and style sheet. */
export function sessionRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps, base, secure } = kit;
  const github = false;

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

  scope.get('/sign-in', async (req, reply) => {
    const q = req.query as { next?: string; signed_out?: string };
    const next = safeNext(base, q.next);
    if (await readSession(deps, req.headers.cookie)) return reply.redirect(next, 303);
    return kit.send(
      reply,
      signInPage(
        { base, session: null },
        { next, github, ...(q.signed_out ? { message: 'You are signed out.' } : {}) },
      ),
    );
  });

  scope.post('/sign-in', async (req, reply) => {
    const form: Record<string, string | undefined> =
      req.body instanceof URLSearchParams ? Object.fromEntries(req.body) : {};
    const next = safeNext(base, form.next);
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
      const { secret, expiresAt } = await openSession(deps, actor.userId, actor.tokenId);
      return reply
        .header('set-cookie', sessionCookie(secret, { path: base || '/', secure, expires: expiresAt }))
        .redirect(next, 303);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return kit.send(reply, signInPage(view, { next, github, error: err.message }), 401);
    }
  });

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

import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../api/errors.ts';
import type { Deps } from '../platform/deps/deps.ts';
import { Html } from './html.ts';
import type { View } from './layout.ts';
import { errorPage } from './pages/error.ts';
import { csrfMatches, readSession, type Session } from '../features/identity/index.ts';

export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export interface Ctx {
  req: FastifyRequest;
  reply: FastifyReply;
  view: View;
  session: Session;
  /** The form's fields, for a POST (the last value of a repeated field). */
  form: Record<string, string>;
  /** The form's fields as sent, for fields that repeat (checkboxes). */
  fields: URLSearchParams;
}

export type PageHandler = (ctx: Ctx) => Promise<Html | FastifyReply>;

/** What every dashboard route shares: where it lives, how pages are sent, how requests are checked. */
export interface Kit {
  deps: Deps;
  /** Path prefix (the path of SLIPWAY_PUBLIC_API_URL), no trailing slash. */
  base: string;
  /** Whether cookies are `Secure` (SLIPWAY_PUBLIC_API_URL is https). */
  secure: boolean;
  send(reply: FastifyReply, body: Html, status?: number): FastifyReply;
  /** A page that needs a session; a POST must also carry the session's CSRF value from this origin. */
  page(handler: PageHandler): (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  sameOrigin(req: FastifyRequest): boolean;
  redirect(reply: FastifyReply, path: string): FastifyReply;
}

export function createKit(deps: Deps): Kit {
  const publicUrl = deps.config.publicApiUrl ? new URL(deps.config.publicApiUrl) : null;
  const base = publicUrl ? publicUrl.pathname.replace(/\/+$/, '') : '';

  const send = (reply: FastifyReply, body: Html, status = 200) =>
    reply.status(status).headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(body.value);

  /** The Origin (or Referer) of a form post must be this service: a cross-site form is refused. */
  const sameOrigin = (req: FastifyRequest) => {
    const from = req.headers.origin ?? req.headers.referer;
    // Browsers send Origin on every POST; a client without it has no ambient cookie to abuse.
    if (!from) return true;
    try {
      const origin = new URL(from).origin;
      if (publicUrl && origin === publicUrl.origin) return true;
      return origin === new URL(`${req.protocol}://${req.headers.host ?? ''}`).origin;
    } catch {
      return false;
    }
  };

  const page: Kit['page'] = (handler) => async (req, reply) => {
    const session = await readSession(deps, req.headers.cookie);
    if (!session) {
      if (req.method !== 'GET')
        return send(
          reply,
          errorPage({ base, session: null }, 'Signed out', 'Your session has ended; sign in again.'),
          401,
        );
      return reply.redirect(`${base}/sign-in?next=${encodeURIComponent(base + req.url)}`, 303);
    }
    const view = { base, session };
    const fields = req.body instanceof URLSearchParams ? req.body : new URLSearchParams();
    const form = Object.fromEntries(fields);
    if (req.method === 'POST' && (!sameOrigin(req) || !csrfMatches(session, form._csrf))) {
      return send(
        reply,
        errorPage(
          view,
          'Form expired',
          'This form was not sent from this dashboard or has expired; go back, reload the page and try again.',
        ),
        403,
      );
    }
    try {
      const out = await handler({ req, reply, view, session, form, fields });
      return out instanceof Html ? send(reply, out) : out;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const title =
        err.status === 404 ? 'Not found' : err.status === 403 ? 'Not allowed' : 'Something went wrong';
      return send(reply, errorPage(view, title, err.message), err.status);
    }
  };

  return {
    deps,
    base,
    secure: publicUrl?.protocol === 'https:',
    send,
    page,
    sameOrigin,
    redirect: (reply, path) => reply.redirect(base + path, 303),
  };
}

/**
 * Runs a change a form asked for: on success, back to `done` (a notice says what happened); when the
 * API refuses, the same page again with the refusal in words, the API's status and the form as typed.
 */
export async function submit(
  kit: Kit,
  ctx: Ctx,
  change: () => Promise<unknown>,
  done: string,
  again: (error: string) => Promise<Html>,
): Promise<FastifyReply> {
  try {
    await change();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return kit.send(ctx.reply, await again(err.message), err.status);
  }
  return kit.redirect(ctx.reply, done);
}

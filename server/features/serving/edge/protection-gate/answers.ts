import type { IncomingMessage, ServerResponse } from 'node:http';
import { returnPath } from '../../../identity/index.ts';
import {
  grantCookie,
  signGrant,
  withoutProtectionCookie,
  type Grant,
} from '../../protection/protection-cookie.ts';
import { sendPage, type EdgePage } from '../pages.ts';
import { originOf, secureFor, type GateState } from './state.ts';

export const PAGES = {
  wrongCode: (): EdgePage => ({
    status: 403,
    title: 'Sign-in link expired',
    message:
      'This sign-in link has expired, was already used, or is for another address. Open the page again to sign in once more.',
  }),
  wrongLink: (): EdgePage => ({
    status: 403,
    title: 'Share link expired',
    message:
      'This share link has expired, was revoked, or is for another project. Ask whoever shared it for a new one.',
  }),
  refused: (): EdgePage => ({
    status: 401,
    title: 'Protected deployment',
    message:
      'This deployment is protected. Open it in a browser to sign in, use a share link, or send the project’s bypass secret in the x-slipway-protection-bypass header.',
  }),
};

/** Marks the edge's own sign-in answers, so that scripts (the Action's health check) can tell them from the app's. */
const ANSWER_HEADER = 'x-slipway-protection';

/** Lets the request on, without the protection cookie. */
export const pass = (req: IncomingMessage): true => {
  const cookie = req.headers.cookie;
  if (cookie !== undefined) {
    const rest = withoutProtectionCookie(cookie);
    if (rest === undefined) delete req.headers.cookie;
    else req.headers.cookie = rest;
  }
  return true;
};

export const page = (req: IncomingMessage, res: ServerResponse, p: EdgePage) => {
  sendPage(req, res, p);
};

/** To the dashboard to sign in (browsers), or a 401 (anything that is not a page load). */
export const deny = (g: GateState, req: IncomingMessage, res: ServerResponse) => {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return page(req, res, { ...PAGES.refused(), headers: { [ANSWER_HEADER]: 'sign-in' } });
  const back = `${originOf(g, req)}${req.url ?? '/'}`;
  const location = `${g.deps.dashboardUrl().replace(/\/+$/, '')}/protection/sign-in?url=${encodeURIComponent(back)}`;
  res.writeHead(302, {
    location,
    'cache-control': 'no-store',
    [ANSWER_HEADER]: 'sign-in',
    'content-length': 0,
  });
  res.end();
};

/** Sets the cookie for this host and sends the visitor on to `next` (a path of this host). */
export const admit = async (
  g: GateState,
  req: IncomingMessage,
  res: ServerResponse,
  grant: Grant,
  next: string | null,
) => {
  const value = await signGrant(g.deps.key, grant);
  const to = returnPath(next ?? '/', { origin: originOf(g, req), base: '' }).path;
  res.writeHead(302, {
    location: to,
    'set-cookie': grantCookie(value, grant.expiresAt, secureFor(g, req)),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-length': 0,
  });
  res.end();
};

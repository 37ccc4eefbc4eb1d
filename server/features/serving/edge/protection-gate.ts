import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { cookieValue, returnPath } from '../../identity/index.ts';
import {
  AUTH_PATH,
  BYPASS_HEADER,
  grantCookie,
  hashMatches,
  PROTECTION_COOKIE,
  sha256,
  SHARE_COOKIE_MS,
  SHARE_PATH,
  signGrant,
  SIGN_IN_COOKIE_MS,
  verifyGrant,
  withoutProtectionCookie,
  type Grant,
} from '../protection/protection-cookie.ts';
import { sendPage, type EdgePage } from './pages.ts';
import type { Guarded } from './resolve-host.ts';

/** What the gate reads and writes outside the request: injected. */
export interface ProtectionGateDeps {
  /** The cookies' signing key (Deps.protectionKey). */
  key: Uint8Array;
  now: () => Date;
  /** Where the dashboard lives (its sign-in for protected hosts is `<url>/protection/sign-in`). */
  dashboardUrl: () => string;
  /** Visitors reach the edge over https (SLIPWAY_PUBLIC_EDGE_URL is https): cookies get `Secure`. */
  httpsPublic: boolean;
  /** Marks a one-time code used and says what it opens; null when unknown, used or expired. */
  useCode(codeHash: string, now: Date): Promise<{ projectId: string; host: string; userId: string } | null>;
  /** A share link's id, project and end, by its token's hash; null when unknown or expired. */
  findLink(
    tokenHash: string,
    now: Date,
  ): Promise<{ id: string; projectId: string; expiresAt: number } | null>;
  /**
   * Drops the project's cached routes (the edge's resolver): a link opened here, or a member
   * signed in here, that they do not list yet was made after they were looked up, and the page
   * it leads to must see it.
   */
  forget?: (projectId: string) => void;
}

/** Decides a protected host's requests (docs/protection.md). */
export interface ProtectionGate {
  /**
   * `true`: the request goes on to the deployment, or to the edge's page about the host (without
   * the protection cookie); anything else: the gate answered it (a redirect to sign in, a page
   * why not, or a cookie being set). `target` is the host's project and protection, whatever the
   * host serves now (a live deployment, a build, a failure). `bypass` is the request's bypass
   * header, taken off the request before (it never reaches an app).
   */
  check(
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    target: Guarded,
    bypass: string | undefined,
  ): true | Promise<true | void> | void;
  /** For upgrades (WebSockets), which cannot be sent to sign in: whether the bypass secret or a cookie admits it. */
  admits(req: IncomingMessage, host: string, target: Guarded, bypass: string | undefined): Promise<boolean>;
}

const PAGES = {
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

/** The path of a request target, without its query. */
const pathOf = (url: string) => {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
};

/**
 * The gate in front of protected hosts. A valid cookie costs a cache look-up (verified tokens are
 * kept until they expire); no request touches the database but a code's or a share link's.
 */
export function createProtectionGate(deps: ProtectionGateDeps): ProtectionGate {
  /** Cookie values already verified, with what they grant. */
  const verified = new LRUCache<string, Grant>({ max: 10_000 });
  const secureFor = (req: IncomingMessage) =>
    deps.httpsPublic || (req.socket as TLSSocket).encrypted === true;
  const originOf = (req: IncomingMessage) =>
    `${secureFor(req) ? 'https' : 'http'}://${req.headers.host ?? ''}`;

  const pass = (req: IncomingMessage): true => {
    const cookie = req.headers.cookie;
    if (cookie !== undefined) {
      const rest = withoutProtectionCookie(cookie);
      if (rest === undefined) delete req.headers.cookie;
      else req.headers.cookie = rest;
    }
    return true;
  };

  const page = (req: IncomingMessage, res: ServerResponse, p: EdgePage) => {
    sendPage(req, res, p);
  };

  /** To the dashboard to sign in (browsers), or a 401 (anything that is not a page load). */
  const deny = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return page(req, res, { ...PAGES.refused(), headers: { [ANSWER_HEADER]: 'sign-in' } });
    const back = `${originOf(req)}${req.url ?? '/'}`;
    const location = `${deps.dashboardUrl().replace(/\/+$/, '')}/protection/sign-in?url=${encodeURIComponent(back)}`;
    res.writeHead(302, {
      location,
      'cache-control': 'no-store',
      [ANSWER_HEADER]: 'sign-in',
      'content-length': 0,
    });
    res.end();
  };

  /** Sets the cookie for this host and sends the visitor on to `next` (a path of this host). */
  const admit = async (req: IncomingMessage, res: ServerResponse, grant: Grant, next: string | null) => {
    const value = await signGrant(deps.key, grant);
    const to = returnPath(next ?? '/', { origin: originOf(req), base: '' }).path;
    res.writeHead(302, {
      location: to,
      'set-cookie': grantCookie(value, grant.expiresAt, secureFor(req)),
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-length': 0,
    });
    res.end();
  };

  const exchange = async (req: IncomingMessage, res: ServerResponse, host: string, target: Guarded) => {
    const query = new URLSearchParams((req.url ?? '').slice(AUTH_PATH.length + 1));
    const code = query.get('code');
    const now = deps.now();
    const used = code ? await deps.useCode(sha256(code), now) : null;
    if (!used || used.projectId !== target.projectId || used.host !== host)
      return page(req, res, PAGES.wrongCode());
    // A member who joined since this host was looked up (joining sends no routing signal).
    if (!target.protection!.members.has(used.userId)) deps.forget?.(target.projectId);
    const grant = {
      projectId: target.projectId,
      host,
      expiresAt: now.getTime() + SIGN_IN_COOKIE_MS,
      user: used.userId,
    };
    return admit(req, res, grant, query.get('next'));
  };

  const share = async (req: IncomingMessage, res: ServerResponse, host: string, target: Guarded) => {
    const query = new URLSearchParams((req.url ?? '').slice(SHARE_PATH.length + 1));
    const token = query.get('token');
    const now = deps.now();
    const link = token ? await deps.findLink(sha256(token), now) : null;
    if (!link || link.projectId !== target.projectId) return page(req, res, PAGES.wrongLink());
    // A link made since this host was looked up (its routing signal still on its way here).
    if (!target.protection!.links.has(link.id)) deps.forget?.(target.projectId);
    const expiresAt = Math.min(link.expiresAt, now.getTime() + SHARE_COOKIE_MS);
    const grant = { projectId: target.projectId, host, expiresAt, link: link.id };
    return admit(req, res, grant, query.get('next'));
  };

  /**
   * A share link's cookie opens the host while its link is not revoked (TargetProtection.links); a
   * sign-in's while its member is still in the organization (TargetProtection.members). A cookie
   * that names neither (signed before cookies named their member) opens nothing: sign in again.
   */
  const allows = (grant: Grant | null, host: string, target: Guarded) =>
    grant !== null &&
    grant.projectId === target.projectId &&
    grant.host === host &&
    grant.expiresAt > deps.now().getTime() &&
    (grant.link !== undefined
      ? target.protection!.links.has(grant.link)
      : grant.user !== undefined && target.protection!.members.has(grant.user));

  const grantOf = async (value: string): Promise<Grant | null> => {
    const known = verified.get(value);
    if (known) return known;
    const grant = await verifyGrant(deps.key, value, deps.now());
    if (grant) verified.set(value, grant);
    return grant;
  };

  return {
    async admits(req, host, target, bypass) {
      const { bypassHash } = target.protection!;
      if (bypass !== undefined && bypassHash && hashMatches(bypass, bypassHash)) return pass(req);
      const value = cookieValue(req.headers.cookie, PROTECTION_COOKIE);
      if (!value || !allows(await grantOf(value), host, target)) return false;
      return pass(req);
    },
    check(req, res, host, target, bypass) {
      const protection = target.protection!;
      if (bypass !== undefined && protection.bypassHash && hashMatches(bypass, protection.bypassHash))
        return pass(req);
      const path = pathOf(req.url ?? '/');
      if (path === AUTH_PATH) return exchange(req, res, host, target);
      if (path === SHARE_PATH) return share(req, res, host, target);
      const value = cookieValue(req.headers.cookie, PROTECTION_COOKIE);
      if (!value) return deny(req, res);
      const known = verified.get(value);
      if (known) return allows(known, host, target) ? pass(req) : deny(req, res);
      return grantOf(value).then((grant) => (allows(grant, host, target) ? pass(req) : deny(req, res)));
    },
  };
}

export { BYPASS_HEADER };

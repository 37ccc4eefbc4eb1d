import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AUTH_PATH,
  sha256,
  SHARE_COOKIE_MS,
  SHARE_PATH,
  SIGN_IN_COOKIE_MS,
} from '../../protection/protection-cookie.ts';
import type { Guarded } from '../resolve-host.ts';
import { admit, page, PAGES } from './answers.ts';
import type { GateState } from './state.ts';

/** A sign-in's one-time code (AUTH_PATH), exchanged for the host's cookie. */
export const exchange = async (
  g: GateState,
  req: IncomingMessage,
  res: ServerResponse,
  host: string,
  target: Guarded,
) => {
  const query = new URLSearchParams((req.url ?? '').slice(AUTH_PATH.length + 1));
  const code = query.get('code');
  const now = g.deps.now();
  const used = code ? await g.deps.useCode(sha256(code), now) : null;
  if (!used || used.projectId !== target.projectId || used.host !== host)
    return page(req, res, PAGES.wrongCode());
  // A member who joined since this host was looked up (joining sends no routing signal).
  if (!target.protection!.members.has(used.userId)) g.deps.forget?.(target.projectId);
  const grant = {
    projectId: target.projectId,
    host,
    expiresAt: now.getTime() + SIGN_IN_COOKIE_MS,
    user: used.userId,
  };
  return admit(g, req, res, grant, query.get('next'));
};

/** A share link's token (SHARE_PATH), exchanged for the host's cookie. */
export const share = async (
  g: GateState,
  req: IncomingMessage,
  res: ServerResponse,
  host: string,
  target: Guarded,
) => {
  const query = new URLSearchParams((req.url ?? '').slice(SHARE_PATH.length + 1));
  const token = query.get('token');
  const now = g.deps.now();
  const link = token ? await g.deps.findLink(sha256(token), now) : null;
  if (!link || link.projectId !== target.projectId) return page(req, res, PAGES.wrongLink());
  // A link made since this host was looked up (its routing signal still on its way here).
  if (!target.protection!.links.has(link.id)) g.deps.forget?.(target.projectId);
  const expiresAt = Math.min(link.expiresAt, now.getTime() + SHARE_COOKIE_MS);
  const grant = { projectId: target.projectId, host, expiresAt, link: link.id };
  return admit(g, req, res, grant, query.get('next'));
};

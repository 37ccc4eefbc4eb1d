import { cookieValue } from '../../../identity/index.ts';
import { AUTH_PATH, hashMatches, PROTECTION_COOKIE, SHARE_PATH } from '../../protection/protection-cookie.ts';
import { deny, pass } from './answers.ts';
import { allows, grantOf } from './grants.ts';
import { exchange, share } from './sign-in.ts';
import type { GateState } from './state.ts';
import type { ProtectionGate } from './types.ts';

/** The path of a request target, without its query. */
const pathOf = (url: string) => {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
};

/**
 * The gate's interface over its state (createProtectionGate makes both). The request's own steps
 * are written here, not behind one more call: `check` runs on every request to a protected host.
 */
export function gateOf(g: GateState): ProtectionGate {
  return {
    async admits(req, host, target, bypass) {
      const { bypassHash } = target.protection!;
      if (bypass !== undefined && bypassHash && hashMatches(bypass, bypassHash)) return pass(req);
      const value = cookieValue(req.headers.cookie, PROTECTION_COOKIE);
      if (!value || !allows(g, await grantOf(g, value), host, target)) return false;
      return pass(req);
    },
    check(req, res, host, target, bypass) {
      const protection = target.protection!;
      if (bypass !== undefined && protection.bypassHash && hashMatches(bypass, protection.bypassHash))
        return pass(req);
      const path = pathOf(req.url ?? '/');
      if (path === AUTH_PATH) return exchange(g, req, res, host, target);
      if (path === SHARE_PATH) return share(g, req, res, host, target);
      const value = cookieValue(req.headers.cookie, PROTECTION_COOKIE);
      if (!value) return deny(g, req, res);
      const known = g.verified.get(value);
      if (known) return allows(g, known, host, target) ? pass(req) : deny(g, req, res);
      return grantOf(g, value).then((grant) =>
        allows(g, grant, host, target) ? pass(req) : deny(g, req, res),
      );
    },
  };
}

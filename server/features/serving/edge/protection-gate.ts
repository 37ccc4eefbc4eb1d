import { BYPASS_HEADER } from '../protection/protection-cookie.ts';
import { gateOf } from './protection-gate/gate.ts';
import { createGateState } from './protection-gate/state.ts';
import type { ProtectionGate, ProtectionGateDeps } from './protection-gate/types.ts';

export type { ProtectionGate, ProtectionGateDeps } from './protection-gate/types.ts';

/**
 * The gate in front of protected hosts. A valid cookie costs a cache look-up (verified tokens are
 * kept until they expire); no request touches the database but a code's or a share link's. Its
 * parts, in protection-gate/: state.ts (what it keeps: the verified cookies), gate.ts (a request's
 * check), grants.ts (what a cookie grants, and whether it opens the host), sign-in.ts (a sign-in's
 * code and a share link exchanged for a cookie), answers.ts (letting on, to sign in, the cookie).
 */
export function createProtectionGate(deps: ProtectionGateDeps): ProtectionGate {
  return gateOf(createGateState(deps));
}

export { BYPASS_HEADER };

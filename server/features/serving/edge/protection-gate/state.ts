import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import type { Grant } from '../../protection/protection-cookie.ts';
import type { ProtectionGateDeps } from './types.ts';

/**
 * What one gate keeps (createProtectionGate makes it once), passed to the functions that decide
 * and answer rather than closed over.
 */
export interface GateState {
  deps: ProtectionGateDeps;
  /** Cookie values already verified, with what they grant. */
  verified: LRUCache<string, Grant>;
}

export function createGateState(deps: ProtectionGateDeps): GateState {
  return { deps, verified: new LRUCache<string, Grant>({ max: 10_000 }) };
}

/** Whether the visitor is on https: its cookies get `Secure`. */
export const secureFor = (g: GateState, req: IncomingMessage) =>
  g.deps.httpsPublic || (req.socket as TLSSocket).encrypted === true;

/** The origin the visitor asked for (`https://host`). */
export const originOf = (g: GateState, req: IncomingMessage) =>
  `${secureFor(g, req) ? 'https' : 'http'}://${req.headers.host ?? ''}`;

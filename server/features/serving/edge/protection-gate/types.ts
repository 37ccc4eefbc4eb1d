import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Guarded } from '../resolve-host.ts';

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

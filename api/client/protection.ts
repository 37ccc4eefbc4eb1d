import type { z } from 'zod';
import { protection } from '../routes/protection.ts';
import type { CreateShareLinkBody } from '../schemas/protection.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

/** Preview protection's secrets (docs/protection.md); the setting itself is `projects.update({ protection })`. */
export function protectionApi(c: Caller) {
  return {
    /** Makes or rotates the bypass secret (admins, 201): shown this once; the previous one stops working. */
    rotateBypass: (projectId: string, o?: CallOptions) => c.call(protection.rotateBypass, { projectId }, o),
    /** Removes the bypass secret (admins). */
    removeBypass: (projectId: string, o?: CallOptions) => c.call(protection.removeBypass, { projectId }, o),
    /** Makes an expiring share link (admins, 201): `url` carries its token and is shown this once. */
    share: (projectId: string, body: z.input<typeof CreateShareLinkBody>, o?: CallOptions) =>
      c.call(protection.share, { projectId }, { ...o, body }),
    /** The project's share links, newest first, without their tokens. */
    links: (projectId: string, query: PageInput = {}, o?: CallOptions) =>
      c.call(protection.links, { projectId }, { ...o, query }),
    /** Revokes a share link (admins). */
    revokeLink: (projectId: string, linkId: string, o?: CallOptions) =>
      c.call(protection.revokeLink, { projectId, linkId }, o),
  };
}

import type { z } from 'zod';
import {
  CreatedProtectionBypass,
  CreatedShareLink,
  type CreateShareLinkBody,
  ShareLink,
} from '../schemas/protection.ts';
import { type Caller, seg } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

const base = (projectId: string) => `/v1/projects/${seg(projectId)}/protection`;

/** Preview protection's secrets (docs/protection.md); the setting itself is `projects.update({ protection })`. */
export function protectionApi(c: Caller) {
  return {
    /** Makes or rotates the bypass secret (admins, 201): shown this once; the previous one stops working. */
    rotateBypass: (projectId: string, o?: CallOptions) =>
      c.data(CreatedProtectionBypass, 'POST', `${base(projectId)}/bypass`, o),
    /** Removes the bypass secret (admins). */
    removeBypass: (projectId: string, o?: CallOptions) => c.deleted(`${base(projectId)}/bypass`, o),
    /** Makes an expiring share link (admins, 201): `url` carries its token and is shown this once. */
    share: (projectId: string, body: z.input<typeof CreateShareLinkBody>, o?: CallOptions) =>
      c.data(CreatedShareLink, 'POST', `${base(projectId)}/links`, { ...o, body }),
    /** The project's share links, newest first, without their tokens. */
    links: (projectId: string, query: PageInput = {}, o?: CallOptions) =>
      c.list(ShareLink, `${base(projectId)}/links`, { ...o, query }),
    /** Revokes a share link (admins). */
    revokeLink: (projectId: string, linkId: string, o?: CallOptions) =>
      c.deleted(`${base(projectId)}/links/${seg(linkId)}`, o),
  };
}

import { id, PageQuery } from '../schemas/common.ts';
import {
  CreatedProtectionBypass,
  CreatedShareLink,
  CreateShareLinkBody,
  ShareLink,
} from '../schemas/protection.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const LinkParams = ProjectParams.extend({ linkId: id('psl') });

/** Preview protection's secrets: the bypass secret and share links (docs/protection.md). */
export const protection = {
  rotateBypass: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/protection/bypass',
    tag: 'projects',
    summary:
      'Make (or rotate) the protection bypass secret (admins); shown this once, the previous one stops working',
    params: ProjectParams,
    response: CreatedProtectionBypass,
    successStatus: 201,
  }),
  removeBypass: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId/protection/bypass',
    tag: 'projects',
    summary: 'Remove the protection bypass secret (admins)',
    params: ProjectParams,
    responseKind: 'deleted',
  }),
  share: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/protection/links',
    tag: 'projects',
    summary: 'Make an expiring share link to a protected deployment (admins); its token is shown this once',
    params: ProjectParams,
    body: CreateShareLinkBody,
    response: CreatedShareLink,
    successStatus: 201,
  }),
  links: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/protection/links',
    tag: 'projects',
    summary: "List the project's share links, newest first, without their tokens",
    params: ProjectParams,
    query: PageQuery,
    response: ShareLink,
    responseKind: 'list',
  }),
  revokeLink: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId/protection/links/:linkId',
    tag: 'projects',
    summary: 'Revoke a share link (admins): it opens nothing from now on',
    params: LinkParams,
    responseKind: 'deleted',
  }),
};

import { Readable } from 'node:stream';
import { z } from 'zod';
import { ApiError } from '../../api/errors.ts';
import { MissingFiles, MissingFilesBody, Sha256, UploadedFile } from '../../api/schemas/uploads.ts';
import { route } from '../http/route-spec.ts';
import { missingFiles, uploadFile } from '../services/uploads/upload-file.ts';

const ProjectParams = z.object({ projectId: z.string() });
const FileParams = z.object({ projectId: z.string(), sha256: Sha256 });

export const uploadRoutes = [
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/files/missing',
    scoped: 'write',
    tag: 'uploads',
    summary: 'Which of these SHA-256 hashes the organization has not uploaded yet (extension)',
    params: ProjectParams,
    body: MissingFilesBody,
    response: MissingFiles,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await missingFiles(deps, actor, params.projectId, body.sha256),
    }),
  }),
  route({
    method: 'PUT',
    url: '/v1/projects/:projectId/files/:sha256',
    scoped: 'write',
    uploadGrant: true,
    tag: 'uploads',
    summary:
      "Upload a file's bytes, named by their SHA-256 (extension); 201 when new, 200 when already there, 413 QUOTA_EXCEEDED past the plan's storage; with X-Slipway-Upload-Grant, off the hourly rate limit",
    params: FileParams,
    rawBody: true,
    response: UploadedFile,
    successStatus: 201,
    handler: async ({ deps, actor, params, body, req }) => {
      if (!(body instanceof Readable)) {
        throw ApiError.validation([
          {
            path: 'body',
            message: "must be the file's bytes, sent with Content-Type: application/octet-stream",
          },
        ]);
      }
      const length = req.headers['content-length'];
      const declared = length && /^\d+$/.test(length) ? Number(length) : null;
      const { file, created } = await uploadFile(
        deps,
        actor,
        params.projectId,
        params.sha256,
        body,
        declared,
      );
      return { kind: 'data', data: file, status: created ? 201 : 200 };
    },
  }),
];

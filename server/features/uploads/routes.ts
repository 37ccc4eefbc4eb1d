import { uploads } from '../../../api/routes/uploads.ts';
import { Readable } from 'node:stream';
import { ApiError } from '../../../api/errors.ts';
import { route } from '../../platform/http/route-spec.ts';
import { missingFiles, uploadFile } from './upload-file.ts';

export const uploadRoutes = [
  route({
    ...uploads.missing,
    scoped: 'write',
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await missingFiles(deps, actor, params.projectId, body.sha256),
    }),
  }),
  route({
    ...uploads.upload,
    scoped: 'write',
    uploadGrant: true,
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

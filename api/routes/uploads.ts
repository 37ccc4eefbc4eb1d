import { z } from 'zod';
import { MissingFiles, MissingFilesBody, Sha256, UploadedFile } from '../schemas/uploads.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const FileParams = z.object({ projectId: z.string(), sha256: Sha256 });

export const uploads = {
  missing: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/files/missing',
    tag: 'uploads',
    summary: 'Which of these SHA-256 hashes the organization has not uploaded yet (extension)',
    params: ProjectParams,
    body: MissingFilesBody,
    response: MissingFiles,
  }),
  upload: contract({
    method: 'PUT',
    url: '/v1/projects/:projectId/files/:sha256',
    tag: 'uploads',
    summary:
      "Upload a file's bytes, named by their SHA-256 (extension); 201 when new, 200 when already there, 413 QUOTA_EXCEEDED past the plan's storage; with X-Slipway-Upload-Grant, off the hourly rate limit",
    params: FileParams,
    rawBody: true,
    response: UploadedFile,
    successStatus: 201,
  }),
};

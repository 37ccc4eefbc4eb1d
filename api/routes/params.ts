import { z } from 'zod';

/** `:projectId`, the first segment of most routes under `/v1/projects/`. */
export const ProjectParams = z.object({ projectId: z.string() });

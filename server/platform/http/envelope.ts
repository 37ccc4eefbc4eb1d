import { z } from 'zod';
import { PageMeta } from '../../../api/schemas/common.ts';
import type { RouteSpec } from './route-spec.ts';

/**
 * The schema of a route's successful answer, from its `response` and `responseKind`: what the
 * OpenAPI description documents and what the server serialises the answer with (one source).
 * Undefined where the answer is not JSON.
 */
export function successSchema(spec: Pick<RouteSpec, 'response' | 'responseKind'>): z.ZodType | undefined {
  const data = spec.response ?? z.unknown();
  switch (spec.responseKind ?? 'data') {
    case 'list':
      return z.object({ success: z.literal(true), data: z.array(data), meta: PageMeta });
    case 'deleted':
      return z.object({ success: z.literal(true), message: z.string() });
    case 'bare':
      return data;
    case 'text':
      return undefined;
    case 'data':
      return z.object({ success: z.literal(true), data, meta: PageMeta.optional() });
  }
}

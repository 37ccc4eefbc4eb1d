import fastJsonStringify from 'fast-json-stringify';
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from './validation.ts';

/**
 * Fastify's schema compilers, fed with the route tables' zod schemas (the same ones the OpenAPI
 * description is generated from).
 */

/** Checks and parses a request part (`parseOrThrow`); a failure is a VALIDATION_ERROR naming the fields. */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (value: unknown) => {
    try {
      return { value: parseOrThrow(schema, value, httpPart ?? '') };
    } catch (error) {
      return { error: error as Error };
    }
  };

/**
 * Writes an answer by its schema with fast-json-stringify: faster than JSON.stringify for the
 * known shapes, and only the documented fields go out. Compiled on the first answer of each
 * route (compiling all of them costs ~180 ms of start-up).
 */
export const zodSerializerCompiler: FastifySerializerCompiler<z.ZodType> = ({ schema }) => {
  let serialize: ((data: unknown) => string) | undefined;
  return (data: unknown) => (serialize ??= compileSerializer(schema))(data);
};

export function compileSerializer(schema: z.ZodType): (data: unknown) => string {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', target: 'draft-7' });
  delete json.$schema;
  return fastJsonStringify(json as Parameters<typeof fastJsonStringify>[0]);
}

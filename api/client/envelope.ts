import type { z } from 'zod';
import { ApiError } from '../errors.ts';
import { DeletedResponse, envelope, listEnvelope } from '../schemas/common.ts';
import { invalidResponse } from './errors.ts';
import type { Http, ReadBody, RequestOptions } from './http.ts';
import type { Page } from './pagination.ts';

/** Reads a JSON body; a body that is not JSON is an ApiError naming what came instead. */
export const readJson: ReadBody<unknown> = async (res, what) => {
  const text = await res.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const type = res.headers.get('content-type') ?? 'no content type';
    throw new ApiError(
      'INTERNAL_ERROR',
      `${what} answered HTTP ${res.status} with ${type} instead of JSON: "${text.slice(0, 200)}"`,
    );
  }
};

export const readText: ReadBody<string> = async (res) => res.text();

/** The typed calls resources are written with: each one unwraps and checks the envelope. */
export interface Caller {
  /** `{ success, data }` -> `data`, checked against `schema`. */
  data<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    opts?: RequestOptions,
  ): Promise<z.infer<S>>;
  /** `{ success, data: [...], meta }` -> `{ data, meta }`, each item checked against `item`. */
  list<S extends z.ZodType>(item: S, path: string, opts?: RequestOptions): Promise<Page<z.infer<S>>>;
  /** `{ success, message }` -> `{ message }`. */
  deleted(path: string, opts?: RequestOptions): Promise<{ message: string }>;
  /** A plain-text answer (env and yaml exports). */
  text(path: string, opts?: RequestOptions): Promise<string>;
}

function check<S extends z.ZodType>(schema: S, body: unknown, what: string, status: number): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalidResponse(what, status, parsed.error);
  return parsed.data;
}

export function createCaller(http: Http): Caller {
  return {
    async data(schema, method, path, opts = {}) {
      const { status, value } = await http.exchange(method, path, opts, readJson);
      // zod cannot infer through a generic schema wrapped in the envelope; the parse checked it.
      const body = check(envelope(schema), value, `${method} ${path}`, status) as {
        data: z.infer<typeof schema>;
      };
      return body.data;
    },
    async list(item, path, opts = {}) {
      const { status, value } = await http.exchange('GET', path, opts, readJson);
      const { data, meta } = check(listEnvelope(item), value, `GET ${path}`, status);
      return { data, meta };
    },
    async deleted(path, opts = {}) {
      const { status, value } = await http.exchange('DELETE', path, opts, readJson);
      return { message: check(DeletedResponse, value, `DELETE ${path}`, status).message };
    },
    async text(path, opts = {}) {
      const { value } = await http.exchange(
        'GET',
        path,
        { accept: 'text/plain, application/yaml, */*', ...opts },
        readText,
      );
      return value;
    },
  };
}

/** Encodes one path segment (ids, domain names, keys, e-mail addresses). */
export const seg = (value: string) => encodeURIComponent(value);

import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { type PathParams, pathOf, type RouteContract } from '../routes/contract.ts';
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

type Item<E extends RouteContract> = E['response'] extends z.ZodType ? z.infer<E['response']> : unknown;

/** What calling a contract entry answers, by its `responseKind`. */
export type Answer<E extends RouteContract> = E extends { responseKind: 'list' }
  ? Page<Item<E>>
  : E extends { responseKind: 'deleted' }
    ? { message: string }
    : E extends { responseKind: 'text' }
      ? string
      : Item<E>;

/** Options of one call of a contract entry: its JSON body is typed by the entry's body schema. */
export type CallInput<E extends RouteContract> = Omit<RequestOptions, 'body'> & {
  body?: E['body'] extends z.ZodType ? z.input<E['body']> : never;
};

/** The typed calls resources are written with: each one unwraps and checks the envelope. */
export interface Caller {
  /**
   * Calls one route of the contract (api/routes): its method, its path built from the template
   * and `params`, and its answer read by `responseKind` and checked against its `response` schema.
   */
  call<E extends RouteContract>(entry: E, params: PathParams<E>, opts?: CallInput<E>): Promise<Answer<E>>;
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
  const caller: Caller = {
    async call(entry, params, opts = {}) {
      const path = pathOf(entry, params);
      const schema = entry.response ?? z.unknown();
      // The kinds are the contract's; the casts say what each one answers (Answer<E>).
      switch (entry.responseKind) {
        case 'list':
          return (await caller.list(schema, path, opts)) as never;
        case 'deleted':
          return (await caller.deleted(path, opts)) as never;
        case 'text':
          return (await caller.text(path, opts)) as never;
        default:
          return (await caller.data(schema, entry.method, path, opts)) as never;
      }
    },
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
  return caller;
}

export { seg } from '../routes/contract.ts';

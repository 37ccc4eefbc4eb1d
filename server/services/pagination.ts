import { sql, type SelectQueryBuilder } from 'kysely';
import { ApiError } from '../../api/errors.ts';
import type { PageMeta, PageQuery } from '../../api/schemas/common.ts';

/** One page of a list, and where the next one starts. */
export interface ListPage<T> {
  items: T[];
  /** Items in all pages: counted for `page` requests only (a cursor request counts nothing). */
  total?: number;
  /** `cursor` of the next page, null on the last. */
  next: string | null;
}

/**
 * How a list is ordered: newest first by a time column, ties broken by id (both descending).
 * Every list has an index on (its filter columns..., time, id), so a page costs the same at any
 * depth when asked by cursor (docs/api.md#pagination; the plans are checked in test/server/query-plans).
 */
export interface ListOrder<Row> {
  /** Column references as the query names them, e.g. `created_at` or `o.created_at`. */
  time: string;
  id: string;
  /** The same two values read from a row of the page. */
  key: (row: Row) => [string, string];
}

/** `page` + `limit` -> OFFSET. */
export const offsetOf = (q: Pick<PageQuery, 'page' | 'limit'>) => (q.page - 1) * q.limit;

export function encodeCursor(time: string, id: string): string {
  return Buffer.from(JSON.stringify([time, id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 2 || !value.every((v) => typeof v === 'string')) {
    throw ApiError.validation([
      { path: 'cursor', message: 'cursor must be the meta.next value of a previous page of this list' },
    ]);
  }
  return value as [string, string];
}

/**
 * Reads one page of `select` (the list's query with its filters and columns): by `cursor` as a
 * keyset seek, else by `page` as an offset, with an exact count of `base` (the same filters,
 * nothing selected). One row past the page is read to know whether there is a next one.
 */
export async function readPage<DB, TB extends keyof DB, Row, CDB, CTB extends keyof CDB>(
  select: SelectQueryBuilder<DB, TB, Row>,
  base: SelectQueryBuilder<CDB, CTB, object>,
  q: PageQuery,
  order: ListOrder<NoInfer<Row>>,
): Promise<ListPage<Row>> {
  if (q.cursor !== undefined && q.page !== 1) {
    throw ApiError.validation([{ path: 'page', message: 'give either page or cursor, not both' }]);
  }
  const time = sql.ref(order.time);
  const id = sql.ref(order.id);
  let rows = select;
  if (q.cursor !== undefined) {
    const [t, i] = decodeCursor(q.cursor);
    rows = rows.where(sql<boolean>`(${time}, ${id}) < (${t}, ${i})`);
  } else if (q.page > 1) {
    rows = rows.offset(offsetOf(q));
  }
  rows = rows
    .orderBy(time, 'desc')
    .orderBy(id, 'desc')
    .limit(q.limit + 1);
  // One after the other: on SQLite's one connection, and in a transaction (webhook deliveries),
  // they would queue anyway.
  const found = await rows.execute();
  let count: number | undefined;
  if (q.cursor === undefined) {
    const n = await base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    count = Number((n as { n: string | number }).n);
  }
  const more = found.length > q.limit;
  const items = more ? found.slice(0, q.limit) : found;
  const last = items.at(-1);
  return {
    items,
    ...(count === undefined ? {} : { total: count }),
    next: more && last ? encodeCursor(...order.key(last)) : null,
  };
}

/** `meta` of a list answer: page and total for a `page` request, always `next`. */
export function pageMeta(q: PageQuery, page: Pick<ListPage<unknown>, 'total' | 'next'>): PageMeta {
  if (q.cursor !== undefined) return { limit: q.limit, next: page.next };
  return { page: q.page, limit: q.limit, total: page.total ?? 0, next: page.next };
}

/**
 * `Link: <...>; rel="next"` of a list answer (RFC 8288, as GitHub sends): the same request with
 * `cursor` in place of `page`, under the API's public URL.
 */
export function nextLink(apiUrl: string, requestUrl: string, next: string): string {
  const url = new URL(requestUrl, 'http://x');
  url.searchParams.delete('page');
  url.searchParams.set('cursor', next);
  return `<${apiUrl.replace(/\/+$/, '')}${url.pathname}${url.search}>; rel="next"`;
}

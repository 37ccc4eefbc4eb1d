import { sql, type SelectQueryBuilder } from 'kysely';
import { ApiError } from '../../../api/errors.ts';
import type { PageMeta, PageQuery } from '../../../api/schemas/common.ts';

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
 * How a list knows its total and where a page starts without reading the rows before it. Lists
 * that leave these out count `base` and skip rows (reading from the far end past the middle).
 */
export interface PageShortcuts {
  /** The exact number of items under the list's filters, from counters (no rows read). */
  total?: () => Promise<number>;
  /**
   * `[time, id]` of the item at `rank` (0 = the newest) by a keyset, for a list that keeps each
   * item's place (deployments' `list_seq`); undefined when it cannot say, and the list skips.
   */
  locate?: (rank: number, total: number) => Promise<[string, string] | undefined>;
}

/**
 * Reads one page of `select` (the list's query with its filters and columns): by `cursor` as a
 * keyset seek, else by `page` (readNumberedPage). One row past the page is read to know whether
 * there is a next one.
 */
export async function readPage<DB, TB extends keyof DB, Row, CDB, CTB extends keyof CDB>(
  select: SelectQueryBuilder<DB, TB, Row>,
  base: SelectQueryBuilder<CDB, CTB, object>,
  q: PageQuery,
  order: ListOrder<NoInfer<Row>>,
  shortcuts: PageShortcuts = {},
): Promise<ListPage<Row>> {
  if (q.cursor !== undefined && q.page !== 1) {
    throw ApiError.validation([{ path: 'page', message: 'give either page or cursor, not both' }]);
  }
  let found: Row[];
  let count: number | undefined;
  if (q.cursor !== undefined) {
    const [t, i] = decodeCursor(q.cursor);
    found = await newestFirst(
      select.where(sql<boolean>`(${sql.ref(order.time)}, ${sql.ref(order.id)}) < (${t}, ${i})`),
      order,
    )
      .limit(q.limit + 1)
      .execute();
  } else {
    count = shortcuts.total ? await shortcuts.total() : await countOf(base);
    found = await readNumberedPage(select, q, order, count, shortcuts);
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

const newestFirst = <DB, TB extends keyof DB, Row>(
  rows: SelectQueryBuilder<DB, TB, Row>,
  order: ListOrder<Row>,
) => rows.orderBy(sql.ref(order.time), 'desc').orderBy(sql.ref(order.id), 'desc');

async function countOf<CDB, CTB extends keyof CDB>(
  base: SelectQueryBuilder<CDB, CTB, object>,
): Promise<number> {
  const n = await base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
  return Number((n as { n: string | number }).n);
}

/**
 * The items at ranks [offset, offset + limit] of a list of `total` (one past the page). Past the
 * end, nothing is read. A list that locates an item by rank seeks from there, so page N costs
 * what page 1 does; otherwise past the middle the list is read from its oldest end, so the last
 * pages cost what the first ones do and only the middle of a long list skips many rows.
 */
async function readNumberedPage<DB, TB extends keyof DB, Row>(
  select: SelectQueryBuilder<DB, TB, Row>,
  q: PageQuery,
  order: ListOrder<Row>,
  total: number,
  shortcuts: PageShortcuts,
): Promise<Row[]> {
  const offset = offsetOf(q);
  if (offset > 0 && offset >= total) return [];
  const time = sql.ref(order.time);
  const id = sql.ref(order.id);
  const start = offset > 0 && shortcuts.locate ? await shortcuts.locate(offset, total) : undefined;
  if (start) {
    return newestFirst(select.where(sql<boolean>`(${time}, ${id}) <= (${start[0]}, ${start[1]})`), order)
      .limit(q.limit + 1)
      .execute();
  }
  if (offset <= total / 2)
    return newestFirst(select, order)
      .offset(offset)
      .limit(q.limit + 1)
      .execute();
  // From the oldest end: rank r is (total - 1 - r) from there.
  const from = Math.max(0, total - 1 - offset - q.limit);
  const rows = await select
    .orderBy(time, 'asc')
    .orderBy(id, 'asc')
    .offset(from)
    .limit(total - offset - from)
    .execute();
  return rows.reverse();
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

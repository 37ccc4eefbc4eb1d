import type { PageMeta } from '../schemas/common.ts';

/** One page of a list: the items and `{ page, limit, total }`. */
export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

/** Fetches page number `page` (1-based). */
export type PageFetcher<T> = (page: number) => Promise<Page<T>>;

/**
 * Walks every page from `startPage` on, yielding items one by one; it stops after the page that
 * reaches `total`, or at the first empty page. Lists are newest first, so an item created while
 * walking shifts the later pages by one: an item may then be seen twice, which callers that care
 * can filter by id.
 */
export async function* paginate<T>(
  fetchPage: PageFetcher<T>,
  startPage = 1,
): AsyncGenerator<T, void, undefined> {
  for (let page = startPage; ; page++) {
    const { data, meta } = await fetchPage(page);
    yield* data;
    if (data.length === 0 || meta.page * meta.limit >= meta.total) return;
  }
}

/** Collects every item of `paginate` into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

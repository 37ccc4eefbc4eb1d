import type { PageMeta } from '../schemas/common.ts';

/** One page of a list: the items and `meta` (`next` is the cursor of the page after it). */
export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

/** Fetches one page: the first when `cursor` is undefined, else the one `cursor` points at. */
export type PageFetcher<T> = (cursor: string | undefined) => Promise<Page<T>>;

/**
 * Walks every page, yielding items one by one: the first page as the caller asked for it, then
 * each next one by its cursor (`meta.next`) until a page says there is none. Cursors never skip
 * or repeat an item when others are created while walking.
 */
export async function* paginate<T>(fetchPage: PageFetcher<T>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const { data, meta } = await fetchPage(cursor);
    yield* data;
    if (!meta.next || data.length === 0) return;
    cursor = meta.next;
  }
}

/** Collects every item of `paginate` into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

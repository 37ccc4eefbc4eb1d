import { html } from '../html.ts';

/**
 * "Older" and "Newest" links over a list read by cursor (the API's `meta.next`): every page
 * costs the same at any depth and counts nothing (docs/api.md#pagination). The other query
 * parameters (filters) are kept.
 */
export function pager(
  path: string,
  params: URLSearchParams,
  p: { cursor?: string | undefined; next: string | null },
) {
  if (!p.cursor && !p.next) return '';
  const link = (cursor?: string) => {
    const q = new URLSearchParams(params);
    q.delete('cursor');
    if (cursor) q.set('cursor', cursor);
    const query = q.toString();
    return query ? `${path}?${query}` : path;
  };
  return html`<nav class="pager" aria-label="Pages">
    ${p.cursor ? html`<a href="${link()}" rel="first">Newest</a>` : ''}
    ${p.next ? html`<a href="${link(p.next)}" rel="next">Older</a>` : ''}
  </nav>`;
}

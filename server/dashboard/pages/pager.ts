import { html } from '../html.ts';

/** "Page 2 of 7" with previous and next links that keep the other query parameters. */
export function pager(
  path: string,
  params: URLSearchParams,
  p: { total: number; page: number; limit: number },
) {
  const pages = Math.max(1, Math.ceil(p.total / p.limit));
  if (pages === 1) return '';
  const link = (page: number) => {
    const q = new URLSearchParams(params);
    q.set('page', String(page));
    return `${path}?${q.toString()}`;
  };
  return html`<nav class="pager" aria-label="Pages">
    ${p.page > 1 ? html`<a href="${link(p.page - 1)}" rel="prev">Previous</a>` : ''}
    <span>Page ${p.page} of ${pages} · ${p.total} in all</span>
    ${p.page < pages ? html`<a href="${link(p.page + 1)}" rel="next">Next</a>` : ''}
  </nav>`;
}

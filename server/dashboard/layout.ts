import { assetUrl } from './assets.ts';
import { html, type Html, type Part } from './html.ts';
import type { Session } from '../features/identity/index.ts';

/** What every page needs to know about the request. */
export interface View {
  /** Path prefix of the dashboard (the path of SLIPWAY_PUBLIC_API_URL), without a trailing slash. */
  base: string;
  session: Session | null;
}

export interface Crumb {
  label: string;
  href?: string;
}

/** The page shell: header with the signed-in user, breadcrumbs, main content. */
export function layout(
  view: View,
  opts: { title: string; crumbs?: Crumb[]; body: Part; live?: boolean; refresh?: string },
): Html {
  const { base, session } = view;
  const crumbs = opts.crumbs ?? [];
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${opts.refresh ? html`<meta http-equiv="refresh" content="0;url=${opts.refresh}" />` : ''}
        <title>${opts.title} · Slipway</title>
        <link rel="stylesheet" href="${assetUrl(base, 'app.css')}" />
        <script type="module" src="${assetUrl(base, 'app.js')}"></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="${base}/">Slipway</a>
          ${
            crumbs.length > 0 &&
            html`<nav aria-label="Breadcrumb">
              <ol class="crumbs">
                ${crumbs.map((c, i) =>
                  c.href && i < crumbs.length - 1
                    ? html`<li><a href="${c.href}">${c.label}</a></li>`
                    : html`<li><span aria-current="page">${c.label}</span></li>`,
                )}
              </ol>
            </nav>`
          }
          ${
            session &&
            html`<form class="who" method="post" action="${base}/sign-out">
              <span>${session.actor.email}</span>
              <input type="hidden" name="_csrf" value="${session.csrf}" />
              <button type="submit" class="link">Sign out</button>
            </form>`
          }
        </header>
        <main id="main">${opts.body}</main>
      </body>
    </html> `;
}

/** A status as a coloured label that also says it in words. */
export const statusBadge = (status: string) =>
  html`<span class="badge s-${status}" data-status="${status}">${status}</span>`;

/**
 * What made a deployment, when it was not a build of its own: a rollback (it serves an earlier
 * deployment's build again) or a promotion (a preview made production without a rebuild).
 */
export function originBadge(d: {
  rollbackFrom: string | null;
  rollbackTo?: string | null | undefined;
  promotedAt: string | null;
}): Html | '' {
  if (d.rollbackFrom || d.rollbackTo)
    return html` <span
      class="badge origin"
      title="${d.rollbackTo ? `Serves the build of ${d.rollbackTo} again` : 'A rollback'}"
      >rollback</span
    >`;
  if (d.promotedAt)
    return html` <span class="badge origin" title="Promoted to production at ${d.promotedAt}"
      >promoted</span
    >`;
  return '';
}

/** An ISO time as "3 min ago", with the exact time on hover and for machines. */
export function age(iso: string | null, now: Date): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  const text =
    s < 60
      ? `${s}s ago`
      : s < 3600
        ? `${Math.floor(s / 60)}m ago`
        : s < 86_400
          ? `${Math.floor(s / 3600)}h ago`
          : `${Math.floor(s / 86_400)}d ago`;
  return html`<time datetime="${iso}" title="${iso}">${text}</time>`;
}

export const duration = (ms: number | null) =>
  ms === null
    ? '—'
    : ms < 1000
      ? `${ms} ms`
      : ms < 60_000
        ? `${(ms / 1000).toFixed(1)} s`
        : `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;

/** An error of the API, in words, as a page region screen readers announce. */
export const errorBox = (message: string | null | undefined) =>
  message ? html`<p class="error" role="alert">${message}</p>` : '';

export const notice = (message: string | null | undefined) =>
  message ? html`<p class="notice" role="status">${message}</p>` : '';

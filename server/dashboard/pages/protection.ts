import type { CreatedShareLink, ShareLink } from '../../../api/schemas/protection.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html, type Html } from '../html.ts';
import { age, errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

const MODES = [
  ['none', 'None: every URL is public'],
  ['previews', 'Previews: deployment and branch URLs need a sign-in; production stays public'],
  ['all', 'All: every URL, production and custom domains too, needs a sign-in'],
] as const;

type ProtectionContext = ProjectContext & { links: ShareLink[]; now: Date };

/** What every section of the tab needs: where its forms post, their CSRF field, whether the caller may change things. */
interface Tab {
  path: string;
  csrf: Html;
  canEdit: boolean;
}

/**
 * Preview protection (docs/protection.md): the setting, the bypass secret and share links. A
 * secret or link is shown on the answer to the form that made it, never again.
 */
export function protectionPage(
  view: View,
  ctx: ProtectionContext,
  state: { error?: string; message?: string; secret?: string; link?: CreatedShareLink } = {},
) {
  const tab: Tab = {
    path: `${view.base}/projects/${ctx.project.id}/protection`,
    csrf: html`<input type="hidden" name="_csrf" value="${view.session?.csrf ?? ''}" />`,
    canEdit: roleAtLeast(ctx.role, 'admin'),
  };
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return projectShell(
    view,
    ctx,
    'protection',
    html`${errorBox(state.error)}
      ${madeSecret(state.secret)}
      ${madeLink(state.link)}
      ${modeSection(tab, ctx.project.protection ?? 'none')}
      ${bypassSection(tab, ctx)}
      ${shareLinksSection(tab, ctx)}`,
    state.message,
  );
}

/** A bypass secret just made: shown on this answer only. */
function madeSecret(secret: string | undefined) {
  // prettier-ignore
  return secret &&
        html`<section class="card" role="status" aria-labelledby="secret-title">
          <h2 id="secret-title">New bypass secret</h2>
          <p>Copy it now: it is not shown again. Send it as the x-slipway-protection-bypass header.</p>
          <label for="made-secret">Bypass secret</label>
          <input id="made-secret" class="secret-url" value="${secret}" readonly />
        </section>`;
}

/** A share link just made: shown on this answer only. */
function madeLink(link: CreatedShareLink | undefined) {
  // prettier-ignore
  return link &&
        html`<section class="card" role="status" aria-labelledby="link-title">
          <h2 id="link-title">Share link made</h2>
          <p>
            Anyone who has it can open the project's protected URLs until ${link.expiresAt}. It is not
            shown again.
          </p>
          <label for="made-link">Share link</label>
          <input id="made-link" class="secret-url" value="${link.url}" readonly />
        </section>`;
}

/** The setting: a form for admins, the mode in words for everyone else. */
function modeSection({ path, csrf, canEdit }: Tab, current: string) {
  // prettier-ignore
  return html`<section aria-labelledby="mode-title">
        <h2 id="mode-title">Who may open this project's URLs</h2>
        ${
          canEdit
            ? html`<form method="post" action="${path}" aria-label="Preview protection">
                ${csrf}
                <fieldset>
                  <legend>Protection</legend>
                  ${MODES.map(
                    ([value, label]) =>
                      html`<label
                          ><input
                            type="radio"
                            name="protection"
                            value="${value}"
                            ${value === current ? 'checked' : ''}
                          />
                          ${label}</label
                        ><br />`,
                  )}
                </fieldset>
                <button type="submit" class="primary">Save protection</button>
              </form>`
            : html`<p>Protection: <strong>${current}</strong>. Admins change it.</p>`
        }
      </section>`;
}

/** When the bypass secret was made, and for admins the form that makes a new one. */
function bypassSection({ path, csrf, canEdit }: Tab, ctx: ProtectionContext) {
  // prettier-ignore
  return html`<section aria-labelledby="bypass-title">
        <h2 id="bypass-title">Bypass secret, for automation</h2>
        <p>
          ${ctx.project.protectionBypassCreatedAt ? html`Made ${age(ctx.project.protectionBypassCreatedAt, ctx.now)}.` : 'None yet.'}
        </p>
        ${
          canEdit &&
          html`<form method="post" action="${path}/bypass" aria-label="Make a bypass secret">
            ${csrf}<button type="submit">Make a new bypass secret</button>
          </form>`
        }
      </section>`;
}

/** The share links: for admins a form that makes one, then the table of them. */
function shareLinksSection(tab: Tab, ctx: ProtectionContext) {
  const { path, csrf, canEdit } = tab;
  // prettier-ignore
  return html`<section aria-labelledby="links-title">
        <h2 id="links-title">Share links</h2>
        ${
          canEdit &&
          html`<form method="post" action="${path}/links" class="filters" aria-label="Make a share link">
            ${csrf}
            <label>Deployment <input name="deploymentId" placeholder="dpl_…" required /></label>
            <label>Hours <input name="hours" type="number" min="1" max="720" value="24" required /></label>
            <button type="submit" class="primary">Make share link</button>
          </form>`
        }
        <table>
          <thead>
            <tr>
              <th scope="col">Opens</th>
              <th scope="col">Made by</th>
              <th scope="col">Made</th>
              <th scope="col">Expires</th>
              ${canEdit ? html`<th scope="col">Revoke</th>` : ''}
            </tr>
          </thead>
          <tbody>
            ${
              ctx.links.length === 0
                ? html`<tr>
                    <td colspan="${canEdit ? '5' : '4'}" class="muted">No share links.</td>
                  </tr>`
                : ctx.links.map((l) => shareLinkRow(tab, l, ctx.now))
            }
          </tbody>
        </table>
      </section>`;
}

/** A share link's row, with a Revoke button for admins. */
function shareLinkRow({ path, csrf, canEdit }: Tab, l: ShareLink, now: Date) {
  // prettier-ignore
  return html`<tr>
                        <td><code>${l.target}</code></td>
                        <td>${l.createdBy}</td>
                        <td>${age(l.createdAt, now)}</td>
                        <td>${l.expiresAt}</td>
                        ${
                          canEdit &&
                          html`<td>
                            <form
                              method="post"
                              action="${path}/links/${l.id}/revoke"
                              data-confirm="Revoke this share link? It and every cookie it set stop working at once."
                            >
                              ${csrf}<button type="submit" aria-label="Revoke share link ${l.id}">
                                Revoke
                              </button>
                            </form>
                          </td>`
                        }
                      </tr>`;
}

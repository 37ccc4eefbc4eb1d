import type { CreatedShareLink, ShareLink } from '../../../api/schemas/protection.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html } from '../html.ts';
import { age, errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

const MODES = [
  ['none', 'None: every URL is public'],
  ['previews', 'Previews: deployment and branch URLs need a sign-in; production stays public'],
  ['all', 'All: every URL, production and custom domains too, needs a sign-in'],
] as const;

/**
 * Preview protection (docs/protection.md): the setting, the bypass secret and share links. A
 * secret or link is shown on the answer to the form that made it, never again.
 */
export function protectionPage(
  view: View,
  ctx: ProjectContext & { links: ShareLink[]; now: Date },
  state: { error?: string; message?: string; secret?: string; link?: CreatedShareLink } = {},
) {
  const { base, session } = view;
  const path = `${base}/projects/${ctx.project.id}/protection`;
  const canEdit = roleAtLeast(ctx.role, 'admin');
  const current = ctx.project.protection ?? 'none';
  const csrf = html`<input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />`;
  return projectShell(
    view,
    ctx,
    'protection',
    html`${errorBox(state.error)}
      ${
        state.secret &&
        html`<section class="card" role="status" aria-labelledby="secret-title">
          <h2 id="secret-title">New bypass secret</h2>
          <p>Copy it now: it is not shown again. Send it as the x-slipway-protection-bypass header.</p>
          <label for="made-secret">Bypass secret</label>
          <input id="made-secret" class="secret-url" value="${state.secret}" readonly />
        </section>`
      }
      ${
        state.link &&
        html`<section class="card" role="status" aria-labelledby="link-title">
          <h2 id="link-title">Share link made</h2>
          <p>
            Anyone who has it can open the project's protected URLs until ${state.link.expiresAt}. It is not
            shown again.
          </p>
          <label for="made-link">Share link</label>
          <input id="made-link" class="secret-url" value="${state.link.url}" readonly />
        </section>`
      }
      <section aria-labelledby="mode-title">
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
      </section>
      <section aria-labelledby="bypass-title">
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
      </section>
      <section aria-labelledby="links-title">
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
                : ctx.links.map(
                    (l) =>
                      html`<tr>
                        <td><code>${l.target}</code></td>
                        <td>${l.createdBy}</td>
                        <td>${age(l.createdAt, ctx.now)}</td>
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
                      </tr>`,
                  )
            }
          </tbody>
        </table>
      </section>`,
    state.message,
  );
}

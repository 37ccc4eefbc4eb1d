import type { CreatedDeployHook, DeployHook } from '../../../api/schemas/deploy-hooks.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html } from '../html.ts';
import { age, errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

/**
 * Deploy hooks: admins make one (its URL is shown on the answer to that form only, never again)
 * and revoke them; every member sees the list, each URL up to its secret.
 */
export function deployHooksPage(
  view: View,
  ctx: ProjectContext & { hooks: DeployHook[]; now: Date },
  state: { error?: string; typed?: Record<string, string>; message?: string; made?: CreatedDeployHook } = {},
) {
  const { base, session } = view;
  const path = `${base}/projects/${ctx.project.id}/deploy-hooks`;
  const canEdit = roleAtLeast(ctx.role, 'admin');
  const typed = state.typed ?? {};
  const csrf = html`<input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />`;
  return projectShell(
    view,
    ctx,
    'deploy-hooks',
    html`${errorBox(state.error)}
      <p class="muted">
        A deploy hook is a secret URL: a <code>POST</code> to it, with no token, builds the head of its branch
        (production for ${ctx.project.branch}, a preview for any other branch). Give it to a CMS or a cron.
      </p>
      ${
        state.made &&
        html`<section class="card" role="status" aria-labelledby="made-title">
          <h2 id="made-title">Deploy hook “${state.made.name}” made</h2>
          <p>Copy its URL now: it is not shown again. Anyone who has it can deploy ${state.made.branch}.</p>
          <label for="made-url">URL</label>
          <input id="made-url" class="secret-url" value="${state.made.url}" readonly />
          <button type="button" data-copy="made-url" hidden>Copy URL</button>
          <p>
            <code>curl -X POST ${state.made.url}</code>
          </p>
        </section>`
      }
      ${
        canEdit &&
        html`<form method="post" action="${path}" class="filters" aria-label="Make a deploy hook">
          ${csrf}
          <label
            >Name <input name="name" value="${typed.name ?? ''}" placeholder="cms" maxlength="64" required
          /></label>
          <label>Branch <input name="branch" value="${typed.branch ?? ctx.project.branch}" required /></label>
          <button type="submit" class="primary">Make deploy hook</button>
        </form>`
      }
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Branch</th>
            <th scope="col">URL</th>
            <th scope="col">Made by</th>
            <th scope="col">Made</th>
            <th scope="col">Last used</th>
            ${canEdit ? html`<th scope="col">Revoke</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${
            ctx.hooks.length === 0
              ? html`<tr>
                  <td colspan="${canEdit ? '7' : '6'}" class="muted">No deploy hooks.</td>
                </tr>`
              : ctx.hooks.map(
                  (h) =>
                    html`<tr>
                      <td data-label="Name">${h.name}</td>
                      <td data-label="Branch">${h.branch}</td>
                      <td data-label="URL"><code>${h.urlPrefix}…</code></td>
                      <td data-label="Made by">${h.createdBy}</td>
                      <td data-label="Made">${age(h.createdAt, ctx.now)}</td>
                      <td data-label="Last used">${age(h.lastUsedAt, ctx.now)}</td>
                      ${
                        canEdit &&
                        html`<td data-label="Revoke">
                          <form
                            method="post"
                            action="${path}/${h.id}/delete"
                            data-confirm="Revoke the deploy hook ${h.name}? Its URL stops working at once."
                          >
                            ${csrf}<button type="submit">Revoke ${h.name}</button>
                          </form>
                        </td>`
                      }
                    </tr>`,
                )
          }
        </tbody>
      </table>`,
    state.message,
  );
}

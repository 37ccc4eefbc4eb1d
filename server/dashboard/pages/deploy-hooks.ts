import type { CreatedDeployHook, DeployHook } from '../../../api/schemas/deploy-hooks.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html, type Html } from '../html.ts';
import { age, errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

/** What the tab's forms need: where they post, their CSRF field, whether the caller may change things. */
interface Forms {
  path: string;
  csrf: Html;
  canEdit: boolean;
}

/**
 * Deploy hooks: admins make one (its URL is shown on the answer to that form only, never again)
 * and revoke them; every member sees the list, each URL up to its secret.
 */
export function deployHooksPage(
  view: View,
  ctx: ProjectContext & { hooks: DeployHook[]; now: Date },
  state: { error?: string; typed?: Record<string, string>; message?: string; made?: CreatedDeployHook } = {},
) {
  const forms: Forms = {
    path: `${view.base}/projects/${ctx.project.id}/deploy-hooks`,
    csrf: html`<input type="hidden" name="_csrf" value="${view.session?.csrf ?? ''}" />`,
    canEdit: roleAtLeast(ctx.role, 'admin'),
  };
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return projectShell(
    view,
    ctx,
    'deploy-hooks',
    html`${errorBox(state.error)}
      <p class="muted">
        A deploy hook is a secret URL: a <code>POST</code> to it, with no token, builds the head of its branch
        (production for ${ctx.project.branch}, a preview for any other branch). Give it to a CMS or a cron.
      </p>
      ${state.made && madeHook(state.made)}
      ${forms.canEdit && makeForm(forms, state.typed ?? {}, ctx.project.branch)}
      ${hookTable(forms, ctx.hooks, ctx.now)}`,
    state.message,
  );
}

/** A deploy hook just made: its URL, shown on this answer only. */
function madeHook(made: CreatedDeployHook) {
  // prettier-ignore
  return html`<section class="card" role="status" aria-labelledby="made-title">
          <h2 id="made-title">Deploy hook “${made.name}” made</h2>
          <p>Copy its URL now: it is not shown again. Anyone who has it can deploy ${made.branch}.</p>
          <label for="made-url">URL</label>
          <input id="made-url" class="secret-url" value="${made.url}" readonly />
          <button type="button" data-copy="made-url" hidden>Copy URL</button>
          <p>
            <code>curl -X POST ${made.url}</code>
          </p>
        </section>`;
}

/** Make a deploy hook: a name and a branch (the production branch unless typed otherwise). */
function makeForm({ path, csrf }: Forms, typed: Record<string, string>, branch: string) {
  // prettier-ignore
  return html`<form method="post" action="${path}" class="filters" aria-label="Make a deploy hook">
          ${csrf}
          <label
            >Name <input name="name" value="${typed.name ?? ''}" placeholder="cms" maxlength="64" required
          /></label>
          <label>Branch <input name="branch" value="${typed.branch ?? branch}" required /></label>
          <button type="submit" class="primary">Make deploy hook</button>
        </form>`;
}

/** The project's deploy hooks, each URL up to its secret; for admins, a Revoke button each. */
function hookTable({ path, csrf, canEdit }: Forms, hooks: DeployHook[], now: Date) {
  // prettier-ignore
  return html`<table>
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
            hooks.length === 0
              ? html`<tr>
                  <td colspan="${canEdit ? '7' : '6'}" class="muted">No deploy hooks.</td>
                </tr>`
              : hooks.map(
                  (h) =>
                    html`<tr>
                      <td data-label="Name">${h.name}</td>
                      <td data-label="Branch">${h.branch}</td>
                      <td data-label="URL"><code>${h.urlPrefix}…</code></td>
                      <td data-label="Made by">${h.createdBy}</td>
                      <td data-label="Made">${age(h.createdAt, now)}</td>
                      <td data-label="Last used">${age(h.lastUsedAt, now)}</td>
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
      </table>`;
}

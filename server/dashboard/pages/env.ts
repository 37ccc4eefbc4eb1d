import type { EnvVar } from '../../../api/schemas/env.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html, type Html } from '../html.ts';
import { errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

const ENVIRONMENTS = ['production', 'preview', 'development'] as const;

/** What the tab's forms need: where they post and their CSRF field. */
interface Forms {
  path: string;
  csrf: Html;
}

/**
 * Environment variables: list, add, change, remove. A secret's value is never sent to the browser
 * (the API returns it as null); it can be replaced, not read.
 */
export function envPage(
  view: View,
  ctx: ProjectContext & { vars: EnvVar[] },
  state: { error?: string; typed?: Record<string, string>; message?: string } = {},
) {
  const canEdit = roleAtLeast(ctx.role, 'developer');
  const forms: Forms = {
    path: `${view.base}/projects/${ctx.project.id}/env`,
    csrf: html`<input type="hidden" name="_csrf" value="${view.session?.csrf ?? ''}" />`,
  };
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return projectShell(
    view,
    ctx,
    'env',
    html`${errorBox(state.error)}
      ${canEdit && addForm(forms, state.typed ?? {})}
      ${varTable(canEdit ? forms : null, ctx.vars)}
      <p class="muted">
        Changes apply to the next deployment. Secrets are stored encrypted and never shown again.
      </p>`,
    state.message,
  );
}

/** Add a variable (the form as typed when the API refused it; a secret's value is not sent back). */
function addForm({ path, csrf }: Forms, typed: Record<string, string>) {
  // prettier-ignore
  return html`<form method="post" action="${path}" class="filters" aria-label="Add a variable">
          ${csrf}
          <label>Name <input name="key" value="${typed.key ?? ''}" placeholder="API_URL" required /></label>
          <label
            >Value
            <input name="value" value="${typed.encrypted === 'on' ? '' : (typed.value ?? '')}" required
          /></label>
          <label
            >Environment
            <select name="environment">
              ${ENVIRONMENTS.map(
                (e) =>
                  html`<option
                    value="${e}"
                    ${(typed.environment ?? 'production') === e ? html` selected` : ''}
                  >
                    ${e}
                  </option>`,
              )}
            </select></label
          >
          <label class="check"
            ><input type="checkbox" name="encrypted" ${typed.encrypted === 'on' ? html` checked` : ''} />
            Secret</label
          >
          <button type="submit" class="primary">Add variable</button>
        </form>`;
}

/** The variables, a secret's value hidden; with `forms`, a column to change or delete each. */
function varTable(forms: Forms | null, vars: EnvVar[]) {
  // prettier-ignore
  return html`<table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Environment</th>
            <th scope="col">Value</th>
            ${forms ? html`<th scope="col">Change</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${
            vars.length === 0
              ? html`<tr>
                  <td colspan="4" class="muted">No variables.</td>
                </tr>`
              : vars.map(
                  (v) =>
                    html`<tr>
                      <td data-label="Name"><code>${v.key}</code></td>
                      <td data-label="Environment">${v.environment}</td>
                      <td data-label="Value">
                        ${v.encrypted ? html`<span class="muted">secret (hidden)</span>` : html`<code>${v.value}</code>`}
                      </td>
                      ${forms !== null && varForms(forms, v)}
                    </tr>`,
                )
          }
        </tbody>
      </table>`;
}

/** One variable's forms: a new value, delete. */
function varForms({ path, csrf }: Forms, v: EnvVar) {
  const target = `${path}/${encodeURIComponent(v.key)}?environment=${v.environment}`;
  // prettier-ignore
  return html`<td data-label="Change">
                          <div class="row">
                            <form
                              method="post"
                              action="${target}"
                              class="row"
                              aria-label="Change ${v.key} (${v.environment})"
                            >
                              ${csrf}
                              <label class="sr-only" for="v-${v.key}-${v.environment}"
                                >New value of ${v.key}</label
                              >
                              <input
                                id="v-${v.key}-${v.environment}"
                                name="value"
                                placeholder="new value"
                                required
                                size="14"
                              />
                              <button type="submit">Save</button>
                            </form>
                            <form
                              method="post"
                              action="${target}&amp;op=delete"
                              data-confirm="Delete ${v.key} (${v.environment})?"
                            >
                              ${csrf}<button type="submit">Delete ${v.key}</button>
                            </form>
                          </div>
                        </td>`;
}

import type { EnvVar } from '../../../api/schemas/env.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html } from '../html.ts';
import { errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

const ENVIRONMENTS = ['production', 'preview', 'development'] as const;

/**
 * Environment variables: list, add, change, remove. A secret's value is never sent to the browser
 * (the API returns it as null); it can be replaced, not read.
 */
export function envPage(
  view: View,
  ctx: ProjectContext & { vars: EnvVar[] },
  state: { error?: string; typed?: Record<string, string>; message?: string } = {},
) {
  const { base, session } = view;
  const path = `${base}/projects/${ctx.project.id}/env`;
  const canEdit = roleAtLeast(ctx.role, 'developer');
  const typed = state.typed ?? {};
  const csrf = html`<input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />`;
  const target = (v: EnvVar) => `${path}/${encodeURIComponent(v.key)}?environment=${v.environment}`;
  return projectShell(
    view,
    ctx,
    'env',
    html`${errorBox(state.error)}
      ${
        canEdit &&
        html`<form method="post" action="${path}" class="filters" aria-label="Add a variable">
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
        </form>`
      }
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Environment</th>
            <th scope="col">Value</th>
            ${canEdit ? html`<th scope="col">Change</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${
            ctx.vars.length === 0
              ? html`<tr>
                  <td colspan="4" class="muted">No variables.</td>
                </tr>`
              : ctx.vars.map(
                  (v) =>
                    html`<tr>
                      <td data-label="Name"><code>${v.key}</code></td>
                      <td data-label="Environment">${v.environment}</td>
                      <td data-label="Value">
                        ${v.encrypted ? html`<span class="muted">secret (hidden)</span>` : html`<code>${v.value}</code>`}
                      </td>
                      ${
                        canEdit &&
                        html`<td data-label="Change">
                          <div class="row">
                            <form
                              method="post"
                              action="${target(v)}"
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
                              action="${target(v)}&amp;op=delete"
                              data-confirm="Delete ${v.key} (${v.environment})?"
                            >
                              ${csrf}<button type="submit">Delete ${v.key}</button>
                            </form>
                          </div>
                        </td>`
                      }
                    </tr>`,
                )
          }
        </tbody>
      </table>
      <p class="muted">
        Changes apply to the next deployment. Secrets are stored encrypted and never shown again.
      </p>`,
    state.message,
  );
}

import type { Delivery, Webhook } from '../../../api/schemas/webhooks.ts';
import { WEBHOOK_EVENTS } from '../../../api/schemas/webhooks.ts';
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

/** Webhooks: add (the secret is typed once, never shown), remove, and each one's recent deliveries. */
export function webhooksPage(
  view: View,
  ctx: ProjectContext & { webhooks: { webhook: Webhook; deliveries: Delivery[] }[]; now: Date },
  state: { error?: string; typed?: Record<string, string | string[]>; message?: string } = {},
) {
  const forms: Forms = {
    path: `${view.base}/projects/${ctx.project.id}/webhooks`,
    csrf: html`<input type="hidden" name="_csrf" value="${view.session?.csrf ?? ''}" />`,
    canEdit: roleAtLeast(ctx.role, 'developer'),
  };
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return projectShell(
    view,
    ctx,
    'webhooks',
    html`${errorBox(state.error)}
    ${forms.canEdit && addForm(forms, state.typed ?? {})}
    ${ctx.webhooks.length === 0 ? html`<p class="muted">No webhooks.</p>` : ''}
    ${ctx.webhooks.map(({ webhook, deliveries }) => webhookCard(forms, webhook, deliveries, ctx.now))}`,
    state.message,
  );
}

/** Add a webhook: its URL, its secret (never sent back) and its events (as typed when the API refused them). */
function addForm({ path, csrf }: Forms, typed: Record<string, string | string[]>) {
  const chosen = new Set([typed.events ?? []].flat());
  // prettier-ignore
  return html`<form method="post" action="${path}" class="stack narrow" aria-label="Add a webhook">
        ${csrf}
        <label for="wh-url">Payload URL</label>
        <input
          id="wh-url"
          name="url"
          type="url"
          value="${String(typed.url ?? '')}"
          placeholder="https://example.com/hooks/slipway"
          required
        />
        <label for="wh-secret">Secret (at least 16 characters; signs every delivery)</label>
        <input id="wh-secret" name="secret" type="password" autocomplete="off" minlength="16" required />
        <fieldset>
          <legend>Events</legend>
          ${WEBHOOK_EVENTS.map(
            (e) =>
              html`<label class="check"
                ><input type="checkbox" name="events" value="${e}" ${chosen.has(e) ? html` checked` : ''} />
                ${e}</label
              > `,
          )}
        </fieldset>
        <button type="submit" class="primary">Add webhook</button>
      </form>`;
}

/** A webhook: its URL and events, a Remove button, and its recent deliveries. */
function webhookCard(forms: Forms, w: Webhook, deliveries: Delivery[], now: Date) {
  const { path, csrf, canEdit } = forms;
  // prettier-ignore
  return html`<section class="card" aria-labelledby="wh-${w.id}">
          <h2 id="wh-${w.id}">${w.url}</h2>
          <p class="muted">
            ${w.events.join(', ')} · ${w.active ? 'active' : 'inactive'} · added ${age(w.createdAt, now)}
          </p>
          ${canEdit && html`<form method="post" action="${path}/${w.id}/delete" data-confirm="Remove the webhook to ${w.url}?">${csrf}<button type="submit">Remove this webhook</button></form>`}
          <h3>Recent deliveries</h3>
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Created</th>
                ${canEdit ? html`<th scope="col">Again</th>` : ''}
              </tr>
            </thead>
            <tbody>
              ${
                deliveries.length === 0
                  ? html`<tr>
                      <td colspan="5" class="muted">None yet.</td>
                    </tr>`
                  : deliveries.map((d) => deliveryRow(forms, w, d, now))
              }
            </tbody>
          </table>
        </section>`;
}

/** A delivery: its event, status and last attempt, and a Redeliver button. */
function deliveryRow({ path, csrf, canEdit }: Forms, w: Webhook, d: Delivery, now: Date) {
  const last = d.attempts.at(-1);
  // prettier-ignore
  return html`<tr>
                        <td data-label="Event">${d.event}</td>
                        <td data-label="Status">
                          <span
                            class="badge ${d.status === 'success' ? 's-live' : d.status === 'failed' ? 's-failed' : 's-building'}"
                            >${d.status}</span
                          >
                        </td>
                        <td data-label="Last attempt">
                          ${last ? `${last.statusCode ?? last.error ?? 'no answer'} in ${Math.round(last.durationMs)} ms (${d.attempts.length} attempts)` : 'not yet'}
                        </td>
                        <td data-label="Created">${age(d.createdAt, now)}</td>
                        ${
                          canEdit &&
                          html`<td data-label="Again">
                            <form method="post" action="${path}/${w.id}/deliveries/${d.id}/redeliver">
                              ${csrf}<button type="submit">Redeliver</button>
                            </form>
                          </td>`
                        }
                      </tr>`;
}

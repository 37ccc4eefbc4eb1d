import type { Delivery, Webhook } from '../../../api/schemas/webhooks.ts';
import { WEBHOOK_EVENTS } from '../../../api/schemas/webhooks.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html } from '../html.ts';
import { age, errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

/** Webhooks: add (the secret is typed once, never shown), remove, and each one's recent deliveries. */
export function webhooksPage(
  view: View,
  ctx: ProjectContext & { webhooks: { webhook: Webhook; deliveries: Delivery[] }[]; now: Date },
  state: { error?: string; typed?: Record<string, string | string[]>; message?: string } = {},
) {
  const { base, session } = view;
  const path = `${base}/projects/${ctx.project.id}/webhooks`;
  const canEdit = roleAtLeast(ctx.role, 'developer');
  const typed = state.typed ?? {};
  const chosen = new Set([typed.events ?? []].flat());
  const csrf = html`<input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />`;
  return projectShell(
    view,
    ctx,
    'webhooks',
    html`${errorBox(state.error)}
    ${
      canEdit &&
      html`<form method="post" action="${path}" class="stack narrow" aria-label="Add a webhook">
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
      </form>`
    }
    ${ctx.webhooks.length === 0 ? html`<p class="muted">No webhooks.</p>` : ''}
    ${ctx.webhooks.map(
      ({ webhook: w, deliveries }) =>
        html`<section class="card" aria-labelledby="wh-${w.id}">
          <h2 id="wh-${w.id}">${w.url}</h2>
          <p class="muted">
            ${w.events.join(', ')} · ${w.active ? 'active' : 'inactive'} · added ${age(w.createdAt, ctx.now)}
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
                  : deliveries.map((d) => {
                      const last = d.attempts.at(-1);
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
                        <td data-label="Created">${age(d.createdAt, ctx.now)}</td>
                        ${
                          canEdit &&
                          html`<td data-label="Again">
                            <form method="post" action="${path}/${w.id}/deliveries/${d.id}/redeliver">
                              ${csrf}<button type="submit">Redeliver</button>
                            </form>
                          </td>`
                        }
                      </tr>`;
                    })
              }
            </tbody>
          </table>
        </section>`,
    )}`,
    state.message,
  );
}

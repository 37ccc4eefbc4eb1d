import type { Domain } from '../../../api/schemas/domains.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html } from '../html.ts';
import { age, errorBox, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

/** Custom domains: add one, the DNS records to create, verify, certificate state, remove. */
export function domainsPage(
  view: View,
  ctx: ProjectContext & { domains: Domain[]; now: Date },
  state: { error?: string; typed?: string; message?: string } = {},
) {
  const { base, session } = view;
  const path = `${base}/projects/${ctx.project.id}/domains`;
  const canEdit = roleAtLeast(ctx.role, 'developer');
  const csrf = html`<input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />`;
  return projectShell(
    view,
    ctx,
    'domains',
    html`${errorBox(state.error)}
    ${
      canEdit &&
      html`<form method="post" action="${path}" class="filters">
        ${csrf}
        <label
          >Domain <input name="domain" value="${state.typed ?? ''}" placeholder="www.example.com" required
        /></label>
        <button type="submit" class="primary">Add domain</button>
      </form>`
    }
    ${ctx.domains.length === 0 ? html`<p class="muted">No custom domains. Deployments are served at their own URLs and production at ${ctx.project.deploymentUrl ?? 'its production URL once deployed'}.</p>` : ''}
    ${ctx.domains.map(
      (d) =>
        html`<section class="card" aria-labelledby="dom-${d.id}">
          <h2 id="dom-${d.id}">
            ${d.domain}
            <span class="badge ${d.status === 'verified' ? 's-live' : 's-building'}">${d.status}</span>
            <span class="muted">certificate: ${d.sslStatus}</span>
          </h2>
          ${
            d.status === 'pending'
              ? html`<p>
                  Create these records at your DNS provider, then
                  verify.${d.expiresAt ? html` Unverified, the claim lapses at <time datetime="${d.expiresAt}">${d.expiresAt.slice(0, 16).replace('T', ' ')} UTC</time>.` : ''}
                </p>`
              : html`<p class="muted">Verified ${age(d.verifiedAt, ctx.now)}.</p>`
          }
          <table>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Name</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              ${d.dnsRecords.map(
                (r) =>
                  html`<tr>
                    <td data-label="Type">${r.type}</td>
                    <td data-label="Name"><code>${r.name}</code></td>
                    <td data-label="Value"><code>${r.value}</code></td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${
            canEdit &&
            html`<div class="row">
              ${d.status === 'pending' ? html`<form method="post" action="${path}/${encodeURIComponent(d.domain)}/verify">${csrf}<button type="submit">Verify</button></form>` : ''}
              <form
                method="post"
                action="${path}/${encodeURIComponent(d.domain)}/delete"
                data-confirm="Remove ${d.domain} from this project?"
              >
                ${csrf}<button type="submit">Remove ${d.domain}</button>
              </form>
            </div>`
          }
        </section>`,
    )}`,
    state.message,
  );
}

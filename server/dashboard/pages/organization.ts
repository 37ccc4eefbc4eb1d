import type { Member, Organization } from '../../../api/schemas/organizations.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { roleAtLeast } from '../../features/identity/index.ts';
import { html, type Html } from '../html.ts';
import { age, errorBox, layout, notice, type View } from '../layout.ts';
import { pager } from './pager.ts';

const ROLES = ['viewer', 'developer', 'admin', 'owner'] as const;

type OrgPageData = {
  org: Organization;
  projects: { items: Project[]; next: string | null; cursor?: string | undefined };
  members: Member[];
  now: Date;
};

/** What the members' forms need: where they post, their CSRF field, the organization's name. */
interface Forms {
  path: string;
  csrf: Html;
  org: Organization;
}

/** An organization: its projects (paged) and its members, whom admins invite, change and remove. */
export function organizationPage(
  view: View,
  data: OrgPageData,
  state: { error?: string; typed?: Record<string, string>; message?: string } = {},
) {
  const { base, session } = view;
  const { org, projects, members, now } = data;
  const path = `${base}/orgs/${org.name}`;
  const isAdmin = roleAtLeast(org.role, 'admin');
  const forms: Forms = {
    path,
    csrf: html`<input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />`,
    org,
  };
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return layout(view, {
    title: org.displayName,
    crumbs: [{ label: 'Projects', href: `${base}/` }, { label: org.displayName }],
    body: html`<h1>${org.displayName} <span class="muted">${org.name}</span></h1>
      ${notice(state.message)} ${errorBox(state.error)}
      <p class="muted">Plan ${org.plan} · ${org.memberCount} members · you are ${org.role}</p>
      <h2>Projects</h2>
      ${projectTable(base, projects.items, now)}
      ${pager(path, new URLSearchParams(), { cursor: projects.cursor, next: projects.next })}
      <h2>Members</h2>
      ${isAdmin && inviteForm(forms, state.typed ?? {})}
      ${memberTable(isAdmin ? forms : null, members, now)}`,
  });
}

const roleOptions = (current: string) =>
  ROLES.map((r) => html`<option value="${r}" ${r === current ? html` selected` : ''}>${r}</option>`);

/** The organization's projects: repository, production URL, age. */
function projectTable(base: string, items: Project[], now: Date) {
  // prettier-ignore
  return html`<table>
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col">Repository</th>
            <th scope="col">Production</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          ${
            items.length === 0
              ? html`<tr>
                  <td colspan="4" class="muted">No projects yet.</td>
                </tr>`
              : items.map(
                  (p) =>
                    html`<tr>
                      <td data-label="Project"><a href="${base}/projects/${p.id}">${p.name}</a></td>
                      <td data-label="Repository">
                        ${p.repositoryUrl ?? 'uploaded files'} <span class="muted">${p.branch}</span>
                      </td>
                      <td data-label="Production">
                        ${p.deploymentUrl ? html`<a href="${p.deploymentUrl}">${p.deploymentUrl}</a>` : html`<span class="muted">none yet</span>`}
                      </td>
                      <td data-label="Created">${age(p.createdAt, now)}</td>
                    </tr>`,
                )
          }
        </tbody>
      </table>`;
}

/** Admins invite a member by e-mail, with a role (the form as typed when the API refused it). */
function inviteForm({ path, csrf }: Forms, typed: Record<string, string>) {
  // prettier-ignore
  return html`<form method="post" action="${path}/members" class="filters" aria-label="Invite a member">
          ${csrf}
          <label>E-mail <input name="email" type="email" value="${typed.email ?? ''}" required /></label>
          <label
            >Role
            <select name="role">
              ${roleOptions(typed.role ?? 'developer')}
            </select></label
          >
          <button type="submit" class="primary">Invite</button>
        </form>`;
}

/** The members, their roles and status; for admins (`forms` given), a column to change or remove each. */
function memberTable(forms: Forms | null, members: Member[], now: Date) {
  // prettier-ignore
  return html`<table>
        <thead>
          <tr>
            <th scope="col">E-mail</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Joined</th>
            ${forms ? html`<th scope="col">Change</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${members.map(
            (m) =>
              html`<tr>
                <td data-label="E-mail">${m.email}</td>
                <td data-label="Role">${m.role}</td>
                <td data-label="Status">${m.status}</td>
                <td data-label="Joined">${age(m.joinedAt, now)}</td>
                ${forms !== null && memberForms(forms, m)}
              </tr>`,
          )}
        </tbody>
      </table>`;
}

/** An admin's forms for one member: change the role, remove. */
function memberForms({ path, csrf, org }: Forms, m: Member) {
  // prettier-ignore
  return html`<td data-label="Change">
                    <div class="row">
                      <form method="post" action="${path}/members/${encodeURIComponent(m.email)}" class="row">
                        ${csrf}
                        <label class="sr-only" for="role-${m.email}">Role of ${m.email}</label>
                        <select id="role-${m.email}" name="role">
                          ${roleOptions(m.role)}
                        </select>
                        <button type="submit">Change role</button>
                      </form>
                      <form
                        method="post"
                        action="${path}/members/${encodeURIComponent(m.email)}"
                        data-confirm="Remove ${m.email} from ${org.displayName}?"
                      >
                        ${csrf}<input type="hidden" name="op" value="remove" /><button type="submit">
                          Remove ${m.email}
                        </button>
                      </form>
                    </div>
                  </td>`;
}

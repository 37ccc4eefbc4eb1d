import type { Organization } from '../../../api/schemas/organizations.ts';
import { html } from '../html.ts';
import { errorBox, layout, type View } from '../layout.ts';

export interface NewProjectState {
  error?: string | undefined;
  /** The form as typed (kept when the API refused it). */
  typed?: Record<string, string>;
}

/**
 * "New project", as Vercel's import and Netlify's "Add new site": from a git repository (its first
 * production deployment starts at once unless unticked), or empty, for uploaded files
 * (`slipway deploy`). Without a script both sets of fields show; the repository's are ignored for
 * an empty project.
 */
export function newProjectPage(view: View, orgs: Organization[], state: NewProjectState = {}) {
  const { base } = view;
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return layout(view, {
    title: 'New project',
    crumbs: [{ label: 'Projects', href: `${base}/` }, { label: 'New project' }],
    body: html`<section class="narrow">
      <h1>New project</h1>
      ${errorBox(state.error)}
      ${
        orgs.length === 0
          ? html`<p>
              You need the role of a developer, admin or owner in an organization to make a project there.
            </p>`
          : newProjectForm(view, orgs, state)
      }
    </section>`,
  });
}

const checked = (on: boolean) => (on ? html` checked` : '');

/** The form: organization, name, source, and the repository's fields (as typed when the API refused it). */
function newProjectForm(view: View, orgs: Organization[], state: NewProjectState) {
  const { base, session } = view;
  const t = state.typed ?? {};
  // prettier-ignore
  return html`<form method="post" action="${base}/new" class="stack new-project">
              <input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />
              <label for="np-org">Organization</label>
              <select id="np-org" name="organizationId">
                ${orgs.map(
                  (o) =>
                    html`<option
                      value="${o.id}"
                      ${t.organizationId === o.id || t.org === o.name ? html` selected` : ''}
                    >
                      ${o.displayName} (${o.name})
                    </option>`,
                )}
              </select>
              <label for="np-name">Name</label>
              <input
                id="np-name"
                name="name"
                value="${t.name ?? ''}"
                required
                maxlength="63"
                pattern="[a-z0-9]([a-z0-9-]*[a-z0-9])?"
                aria-describedby="np-name-help"
              />
              <small id="np-name-help" class="muted"
                >Lowercase letters, digits and hyphens: it becomes part of the project's URL.</small
              >
              ${sourceFields(state)}
              <div class="row">
                <button type="submit" class="primary">Create project</button>
                <a href="${base}/">Cancel</a>
              </div>
            </form>`;
}

/** From a Git repository (its URL, branch, and whether to deploy at once) or empty, for uploaded files. */
function sourceFields(state: NewProjectState) {
  const t = state.typed ?? {};
  const fromGit = t.source !== 'upload';
  // prettier-ignore
  return html`<fieldset>
                <legend>Source</legend>
                <label class="check"
                  ><input type="radio" name="source" value="git" ${checked(fromGit)} /> A Git
                  repository</label
                >
                <label class="check"
                  ><input type="radio" name="source" value="upload" ${checked(!fromGit)} /> Empty, for
                  uploaded files (<code>slipway deploy</code> from a folder)</label
                >
              </fieldset>
              <fieldset class="git-only">
                <legend>Repository</legend>
                <div class="stack">
                  <label for="np-repo">Repository URL</label>
                  <input
                    id="np-repo"
                    name="repositoryUrl"
                    value="${t.repositoryUrl ?? ''}"
                    placeholder="https://github.com/acme/site.git"
                  />
                  <label for="np-branch">Production branch</label>
                  <input id="np-branch" name="branch" value="${t.branch ?? 'main'}" />
                  <label class="check"
                    ><input
                      type="checkbox"
                      name="deploy"
                      ${checked(state.typed ? t.deploy === 'on' : true)}
                    />
                    Deploy the production branch now</label
                  >
                </div>
              </fieldset>`;
}

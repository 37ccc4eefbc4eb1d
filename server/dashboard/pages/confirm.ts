import type { Deployment } from '../../../api/schemas/deployments.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { html } from '../html.ts';
import { errorBox, layout, type View } from '../layout.ts';
import { ACTION_LABEL, type Action } from './deployment.ts';

const WHAT: Record<Action, (d: Deployment, p: Project) => string> = {
  promote: (d, p) =>
    `${p.name}'s production URL will serve ${d.id} (branch ${d.branch}) at once, without a rebuild.`,
  rollback: (d, p) =>
    d.id === p.productionDeploymentId
      ? `${p.name}'s production URL will serve the production deployment that went live before ${d.id}, without a rebuild.`
      : `${p.name}'s production URL will serve the build of ${d.id} again, without a rebuild.`,
  redeploy: (d) =>
    `A new ${d.target} deployment of branch ${d.branch}${d.commitHash ? ` at commit ${d.commitHash.slice(0, 12)}` : ''} will be built.`,
};

/** "Are you sure?": the action in words and one button; the API's refusal is shown here in words. */
export function confirmPage(
  view: View,
  data: { action: Action; deployment: Deployment; project: Project; orgName: string; error?: string },
) {
  const { base, session } = view;
  const { action, deployment: d, project } = data;
  const path = `${base}/deployments/${d.id}`;
  const label = ACTION_LABEL[action](d, project);
  return layout(view, {
    title: `${label} · ${project.name}`,
    crumbs: [
      { label: 'Projects', href: `${base}/` },
      { label: data.orgName, href: `${base}/orgs/${data.orgName}` },
      { label: project.name, href: `${base}/projects/${project.id}` },
      { label: d.id, href: path },
      { label },
    ],
    body: html`<section class="narrow">
      <h1>${label}?</h1>
      ${errorBox(data.error)}
      <p>${WHAT[action](d, project)}</p>
      <form method="post" action="${path}/${action}" class="row">
        <input type="hidden" name="_csrf" value="${session?.csrf ?? ''}" />
        ${
          action === 'redeploy' &&
          html`<label class="check"
            ><input type="checkbox" name="cache" checked /> Use the build cache</label
          >`
        }
        <button type="submit" class="primary">${label}</button>
        <a href="${path}">Cancel</a>
      </form>
    </section>`,
  });
}

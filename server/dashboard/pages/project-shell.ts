import type { Role } from '../../../api/schemas/organizations.ts';
import type { Project } from '../../../api/schemas/projects.ts';
import { html, type Part } from '../html.ts';
import { layout, notice, type View } from '../layout.ts';

export type ProjectTab =
  'deployments' | 'domains' | 'env' | 'webhooks' | 'deploy-hooks' | 'protection' | 'metrics';

const TABS: [ProjectTab, string, string][] = [
  ['deployments', 'Deployments', ''],
  ['domains', 'Domains', '/domains'],
  ['env', 'Environment variables', '/env'],
  ['webhooks', 'Webhooks', '/webhooks'],
  ['deploy-hooks', 'Deploy hooks', '/deploy-hooks'],
  ['protection', 'Protection', '/protection'],
  ['metrics', 'Metrics', '/metrics'],
];

export interface ProjectContext {
  project: Project;
  orgName: string;
  role: Role;
}

/** A project's page: its name, its tabs, then the tab's content. */
export function projectShell(view: View, ctx: ProjectContext, tab: ProjectTab, body: Part, message?: string) {
  const { base } = view;
  const { project } = ctx;
  const path = `${base}/projects/${project.id}`;
  const label = TABS.find(([t]) => t === tab)![1];
  return layout(view, {
    title: tab === 'deployments' ? project.name : `${label} · ${project.name}`,
    crumbs: [
      { label: 'Projects', href: `${base}/` },
      { label: ctx.orgName, href: `${base}/orgs/${ctx.orgName}` },
      { label: project.name },
    ],
    body: html`<h1>${project.name}</h1>
      <nav class="tabs" aria-label="Project">
        ${TABS.map(([t, name, suffix]) =>
          t === tab
            ? html`<a href="${path}${suffix}" aria-current="page">${name}</a>`
            : html`<a href="${path}${suffix}">${name}</a>`,
        )}
      </nav>
      ${notice(message)} ${body}`,
  });
}

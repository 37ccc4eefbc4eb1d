import type { Deployment } from '../../api/schemas/deployments.ts';

/** How a protected preview is reached, as the comment keeps it (CommentState's preview). */
export interface PreviewAccess {
  /** The deployment's URLs need a sign-in, a share link or the bypass secret; absent from older servers and comments. */
  protected?: boolean;
  /** The project's Protection tab in the dashboard, where admins make share links; null when unknown. */
  protectionUrl?: string | null;
}

/**
 * The project's Protection tab, next to the deployment's page in the dashboard
 * (`<dashboard>/deployments/<id>` -> `<dashboard>/projects/<project>/protection`); null when the
 * service names no page of the deployment.
 */
function protectionTabOf(d: Pick<Deployment, 'id' | 'projectId' | 'dashboardUrl'>): string | null {
  if (!d.dashboardUrl) return null;
  const page = new URL(d.dashboardUrl);
  const suffix = `/deployments/${d.id}`;
  if (!page.pathname.endsWith(suffix)) return null;
  page.pathname = `${page.pathname.slice(0, -suffix.length)}/projects/${d.projectId}/protection`;
  page.search = '';
  return page.toString();
}

/** What the comment says about reaching a deployment's preview (nothing when it is not protected). */
export function accessOf(d: Deployment): PreviewAccess {
  if (d.protected !== true) return d.protected === false ? { protected: false } : {};
  return { protected: true, protectionUrl: protectionTabOf(d) };
}

/**
 * How a reviewer gets into a protected preview, in one line: a member signs in when they open
 * it; anyone else needs a share link that an admin makes (docs/protection.md).
 */
export function accessLine(deploymentId: string | null, protectionUrl: string | null | undefined): string {
  const tab = protectionUrl ? `the [Protection tab](${protectionUrl})` : 'the project’s Protection tab';
  const command = deploymentId ? ` or \`slipway protection share ${deploymentId}\`` : '';
  return (
    '🔒 Protected: open it and sign in with Slipway (members of the project’s organization). ' +
    `Anyone else needs a share link, which an admin makes on ${tab}${command}.`
  );
}

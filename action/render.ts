import type { Deployment, DeploymentStatus } from '../api/schemas/deployments.ts';
import { formatDuration } from './duration.ts';

/** A status for people, with an icon. */
export function statusLabel(status: DeploymentStatus, timedOut = false): string {
  const labels: Record<DeploymentStatus, string> = {
    queued: '⏳ Queued',
    building: '🔨 Building',
    deploying: '🚀 Deploying',
    live: '✅ Live',
    failed: '❌ Failed',
  };
  return timedOut ? `${labels[status]} (timed out waiting)` : labels[status];
}

/** The first 7 characters of a commit, as code; a dash when unknown. */
export const shortCommit = (sha: string | null | undefined) => (sha ? `\`${sha.slice(0, 7)}\`` : '–');

/** A URL as a markdown link; a dash when there is none. */
export const link = (url: string | null | undefined, text?: string) =>
  url ? `[${text ?? url}](${url})` : '–';

/** A duration in milliseconds for a table cell. */
export const cellDuration = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? '–' : formatDuration(ms);

/** Escapes what would break a markdown table cell. */
export const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** A markdown table. */
export function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** Text inside a fenced block that its own content cannot close. */
export function fenced(lines: string[]): string {
  const fence = '`'.repeat(
    Math.max(3, ...lines.map((l) => (l.match(/`+/g) ?? []).reduce((m, r) => Math.max(m, r.length + 1), 0))),
  );
  return [`${fence}text`, ...lines, fence].join('\n');
}

/** The build and deploy durations of a deployment, as `12.3s + 1.1s`. */
export const durations = (d: Deployment) =>
  `${cellDuration(d.buildDurationMs)} + ${cellDuration(d.deployDurationMs)}`;

import type { PreviewStatus } from './comment-state.ts';

/** The first 7 characters of a commit, in code style. */
export const shortSha = (sha: string | null | undefined) => (sha ? `\`${sha.slice(0, 7)}\`` : '`unknown`');

/** `2026-11-22 10:00 UTC`: readable and the same for every reader. */
export const formatTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** `1.2 s` or `850 ms`. */
export const formatDuration = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;

export const STATUS_LABEL: Record<PreviewStatus, string> = {
  'awaiting-approval': '⏸️ Waiting for approval',
  queued: '⏳ Queued',
  building: '🔨 Building',
  deploying: '🚚 Deploying',
  live: '✅ Live',
  failed: '❌ Failed',
};

/** One line of free text, safe inside a Markdown table cell. */
export const cell = (s: string) => s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim();

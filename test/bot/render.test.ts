import { describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import {
  approvalCheckOutput,
  logBlock,
  previewCheckOutput,
  productionCheckOutput,
  supersededCheckOutput,
} from '../../bot/render/check.ts';
import { type CommentState, decodeState, encodeState } from '../../bot/render/comment-state.ts';
import { renderComment } from '../../bot/render/comment.ts';
import { helpReply } from '../../bot/render/replies.ts';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const deployment = (over: Partial<Deployment> = {}): Deployment => ({
  id: 'dpl_AAAAAAAAAAAAAAAAAAAA',
  projectId: 'prj_BBBBBBBBBBBBBBBBBBBB',
  status: 'live',
  target: 'preview',
  branch: 'feature/login',
  commitHash: SHA,
  commitMessage: 'Add the login page',
  author: 'dev@example.com',
  message: `Preview of octo/site#12 (${SHA})`,
  buildDurationMs: 12_345,
  deployDurationMs: 420,
  url: 'http://site-abc123.localhost:3001',
  errorMessage: null,
  rollbackFrom: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  readyAt: '2026-11-22T10:00:13.000Z',
  promotedAt: null,
  ...over,
});

const state = (over: Partial<CommentState> = {}): CommentState => ({
  preview: {
    deploymentId: 'dpl_AAAAAAAAAAAAAAAAAAAA',
    sha: SHA,
    status: 'live',
    url: 'http://site-abc123.localhost:3001',
    logsUrl: 'https://github.com/octo/site/runs/77',
    error: null,
  },
  production: null,
  notes: [],
  closed: false,
  updatedAt: '2026-11-22T10:00:13.000Z',
  ...over,
});

describe('the pull request comment', () => {
  it('shows the live preview, with its state hidden in the comment', () => {
    const body = renderComment(state());
    expect(body).toMatchInlineSnapshot(`
      "<!-- slipway-bot:preview -->
      ### Slipway preview

      | | |
      | :-- | :-- |
      | **Commit** | \`0123456\` |
      | **Status** | ✅ Live |
      | **Preview** | [site-abc123.localhost:3001](http://site-abc123.localhost:3001) |
      | **Logs** | [Build details](https://github.com/octo/site/runs/77) |
      | **Updated** | 2026-11-22 10:00 UTC |

      <sub>Comment \`/slipway help\` for commands.</sub>
      <!-- slipway-bot:state eyJwcmV2aWV3Ijp7ImRlcGxveW1lbnRJZCI6ImRwbF9BQUFBQUFBQUFBQUFBQUFBQUFBQSIsInNoYSI6IjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1NjciLCJzdGF0dXMiOiJsaXZlIiwidXJsIjoiaHR0cDovL3NpdGUtYWJjMTIzLmxvY2FsaG9zdDozMDAxIiwibG9nc1VybCI6Imh0dHBzOi8vZ2l0aHViLmNvbS9vY3RvL3NpdGUvcnVucy83NyIsImVycm9yIjpudWxsfSwicHJvZHVjdGlvbiI6bnVsbCwibm90ZXMiOltdLCJjbG9zZWQiOmZhbHNlLCJ1cGRhdGVkQXQiOiIyMDI2LTExLTIyVDEwOjAwOjEzLjAwMFoifQ -->"
    `);
    expect(decodeState(body)).toEqual(state());
    // With a branch URL (servers since branch URLs): a row of its own, while building too.
    const branchUrl = 'http://site-git-feature-login.localhost:3001';
    for (const status of ['building', 'live'] as const) {
      const withBranch = renderComment(state({ preview: { ...state().preview!, status, branchUrl } }));
      expect(withBranch).toContain(
        `| **Branch URL** | [site-git-feature-login.localhost:3001](${branchUrl}) (always the newest live preview of the branch) |`,
      );
      expect(decodeState(withBranch)?.preview?.branchUrl).toBe(branchUrl);
    }
  });

  it('shows a failure, a promotion, notes and closing', () => {
    const failed = renderComment(
      state({
        preview: {
          ...state().preview!,
          status: 'failed',
          url: null,
          error: 'Build failed: "npm run build" exited with code 2.',
        },
        notes: [
          'ℹ️ Merged into `develop`, which is not the production branch of site (`main`): nothing was promoted.',
        ],
      }),
    );
    expect(failed).toMatchInlineSnapshot(`
      "<!-- slipway-bot:preview -->
      ### Slipway preview

      | | |
      | :-- | :-- |
      | **Commit** | \`0123456\` |
      | **Status** | ❌ Failed: Build failed: "npm run build" exited with code 2. |
      | **Preview** | — |
      | **Logs** | [Build details](https://github.com/octo/site/runs/77) |
      | **Updated** | 2026-11-22 10:00 UTC |

      ℹ️ Merged into \`develop\`, which is not the production branch of site (\`main\`): nothing was promoted.

      <sub>Comment \`/slipway help\` for commands.</sub>
      <!-- slipway-bot:state eyJwcmV2aWV3Ijp7ImRlcGxveW1lbnRJZCI6ImRwbF9BQUFBQUFBQUFBQUFBQUFBQUFBQSIsInNoYSI6IjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1NjciLCJzdGF0dXMiOiJmYWlsZWQiLCJ1cmwiOm51bGwsImxvZ3NVcmwiOiJodHRwczovL2dpdGh1Yi5jb20vb2N0by9zaXRlL3J1bnMvNzciLCJlcnJvciI6IkJ1aWxkIGZhaWxlZDogXCJucG0gcnVuIGJ1aWxkXCIgZXhpdGVkIHdpdGggY29kZSAyLiJ9LCJwcm9kdWN0aW9uIjpudWxsLCJub3RlcyI6WyLihLnvuI8gTWVyZ2VkIGludG8gYGRldmVsb3BgLCB3aGljaCBpcyBub3QgdGhlIHByb2R1Y3Rpb24gYnJhbmNoIG9mIHNpdGUgKGBtYWluYCk6IG5vdGhpbmcgd2FzIHByb21vdGVkLiJdLCJjbG9zZWQiOmZhbHNlLCJ1cGRhdGVkQXQiOiIyMDI2LTExLTIyVDEwOjAwOjEzLjAwMFoifQ -->"
    `);
    const promoted = renderComment(
      state({
        production: {
          deploymentId: 'dpl_AAAAAAAAAAAAAAAAAAAA',
          how: 'promoted',
          by: 'the merge',
          sha: SHA,
          branch: 'feature/login',
          status: 'live',
          url: 'http://site.localhost:3001',
          error: null,
        },
      }),
    );
    expect(promoted.split('\n').filter((l) => l.startsWith('🚀'))).toMatchInlineSnapshot(`
      [
        "🚀 **Production:** the merge promoted preview \`dpl_AAAAAAAAAAAAAAAAAAAA\` (\`0123456\`) to production: http://site.localhost:3001",
      ]
    `);
    const deploying = renderComment(
      state({
        production: {
          deploymentId: 'dpl_CCCCCCCCCCCCCCCCCCCC',
          how: 'deployed',
          by: 'the merge',
          sha: null,
          branch: 'main',
          status: 'building',
          url: null,
          error: null,
        },
        closed: true,
      }),
    );
    expect(deploying.split('\n').filter((l) => /^(🚀|🔒)/.test(l))).toMatchInlineSnapshot(`
      [
        "🚀 **Production:** after the merge there was no live preview of the merged commit, so a production deployment of \`main\` (\`dpl_CCCCCCCCCCCCCCCCCCCC\`) is 🔨 building.",
        "🔒 This pull request was closed without merging. Its preview is inactive on GitHub; nothing was promoted.",
      ]
    `);
  });

  it('waiting for approval says what unlocks it', () => {
    const body = renderComment(
      state({
        preview: {
          deploymentId: null,
          sha: SHA,
          status: 'awaiting-approval',
          url: null,
          logsUrl: null,
          error: null,
        },
      }),
    );
    expect(body.split('\n').filter((l) => l.startsWith('| **'))).toMatchInlineSnapshot(`
      [
        "| **Commit** | \`0123456\` |",
        "| **Status** | ⏸️ Waiting for approval |",
        "| **Preview** | Waiting for someone with write access to comment \`/preview\` or click **Approve preview** on the check |",
        "| **Updated** | 2026-11-22 10:00 UTC |",
      ]
    `);
  });

  it('ignores a state line that was tampered with', () => {
    expect(decodeState('<!-- slipway-bot:state bm90IGpzb24 -->')).toBeNull();
    expect(decodeState(encodeState(state()).replace('eyJ', 'eyK'))).toBeNull();
    expect(decodeState('no state here')).toBeNull();
  });
});

describe('the check output', () => {
  it('follows the deployment through its states', () => {
    expect(
      previewCheckOutput(deployment({ status: 'building', buildDurationMs: null, deployDurationMs: null })),
    ).toMatchInlineSnapshot(`
      {
        "summary": "Deployment \`dpl_AAAAAAAAAAAAAAAAAAAA\` of \`0123456\` is building. This check is updated when it is live or has failed.

      | Deployment | Commit | Branch | Build | Deploy |
      | :-- | :-- | :-- | :-- | :-- |
      | \`dpl_AAAAAAAAAAAAAAAAAAAA\` | \`0123456\` | \`feature/login\` | — | — |",
        "title": "Building the preview",
      }
    `);
    expect(previewCheckOutput(deployment())).toMatchInlineSnapshot(`
      {
        "summary": "**Preview:** http://site-abc123.localhost:3001

      | Deployment | Commit | Branch | Build | Deploy |
      | :-- | :-- | :-- | :-- | :-- |
      | \`dpl_AAAAAAAAAAAAAAAAAAAA\` | \`0123456\` | \`feature/login\` | 12.3 s | 420 ms |

      Click **Promote** to make this preview production, or **Redeploy** to build it again.",
        "title": "Preview is live",
      }
    `);
    // A preview with a branch URL shows it under its own.
    const withBranch = previewCheckOutput(
      deployment({ branchUrl: 'http://site-git-feature-login.localhost:3001' }),
    ).summary;
    expect(withBranch.split('\n\n').slice(0, 2)).toEqual([
      '**Preview:** http://site-abc123.localhost:3001',
      '**Branch URL:** http://site-git-feature-login.localhost:3001 (always the newest live preview of `feature/login`)',
    ]);
    expect(
      previewCheckOutput(
        deployment({ status: 'failed', errorMessage: 'Build failed: "npm run build" exited with code 2.' }),
        '> site@1.0.0 build\n> vite build\nerror: cannot find module ./App',
      ),
    ).toMatchInlineSnapshot(`
      {
        "summary": "The preview of \`0123456\` failed: Build failed: "npm run build" exited with code 2.

      | Deployment | Commit | Branch | Build | Deploy |
      | :-- | :-- | :-- | :-- | :-- |
      | \`dpl_AAAAAAAAAAAAAAAAAAAA\` | \`0123456\` | \`feature/login\` | 12.3 s | 420 ms |

      Fix the build and push, or click **Redeploy** (or comment \`/preview\`) to try again.",
        "text": "Last lines of the build log:

      \`\`\`text
      > site@1.0.0 build
      > vite build
      error: cannot find module ./App
      \`\`\`",
        "title": "Preview failed",
      }
    `);
  });

  it('reports promotions, production deployments, approvals and superseded previews', () => {
    expect(
      productionCheckOutput(deployment({ target: 'production' }), 'promoted', 'http://site.localhost:3001'),
    ).toMatchInlineSnapshot(`
      {
        "summary": "Preview \`dpl_AAAAAAAAAAAAAAAAAAAA\` of \`0123456\` is now production, without a rebuild: http://site.localhost:3001

      It keeps the environment variables it was built with (the preview ones).",
        "title": "Promoted to production",
      }
    `);
    expect(
      productionCheckOutput(
        deployment({ target: 'production', branch: 'main', status: 'queued' }),
        'deployed',
        null,
      ),
    ).toMatchInlineSnapshot(`
      {
        "summary": "There was no live preview of the merged commit, so a production deployment of \`main\` started: \`dpl_AAAAAAAAAAAAAAAAAAAA\` is queued.

      | Deployment | Commit | Branch | Build | Deploy |
      | :-- | :-- | :-- | :-- | :-- |
      | \`dpl_AAAAAAAAAAAAAAAAAAAA\` | \`0123456\` | \`main\` | 12.3 s | 420 ms |",
        "title": "Deploying to production",
      }
    `);
    expect(approvalCheckOutput(SHA)).toMatchInlineSnapshot(`
      {
        "summary": "This pull request comes from a fork, so its code is not built until someone with write access approves commit \`0123456\`: click **Approve preview** above or comment \`/preview\`. Review the changes first: the build runs them. Fork previews only ever get the project's \`preview\` environment variables. Each new commit needs a new approval.",
        "title": "Waiting for approval",
      }
    `);
    expect(supersededCheckOutput('fedcba9876543210fedcba9876543210fedcba98')).toMatchInlineSnapshot(`
      {
        "summary": "A newer preview (commit \`fedcba9\`) replaced this one.",
        "title": "Superseded by fedcba9",
      }
    `);
  });

  it('fences a log so that backticks in it cannot end the block', () => {
    expect(logBlock('a ``` b\nc')).toBe('````text\na ``` b\nc\n````');
  });

  it('help lists every command', () => {
    expect(helpReply()).toMatchInlineSnapshot(`
      "**Slipway commands** (people with write access to the repository):

      | Command | What it does |
      | :-- | :-- |
      | \`/preview\` | Builds a preview of the head commit now, whatever the draft, label, path and \`[skip ...]\` rules say; approves a fork's commit. |
      | \`/promote\` | Makes the live preview of the head commit production, without a rebuild. |
      | \`/rollback\` | Rolls production back to the deployment that was live before the current one; \`/rollback dpl_...\` to that earlier production deployment. |
      | \`/slipway help\` | Shows this list (anyone). |

      The **Slipway Preview** check also has buttons: **Redeploy**, **Promote**, and **Approve preview** for forks.
      Settings live in \`.github/slipway.yml\` on the default branch."
    `);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeState } from '../../bot/render/comment-state.ts';
import { renderComment } from '../../bot/render/comment.ts';
import { spawnCli } from '../cli/spawn-cli.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { type Harness, normalise, startHarness } from './helpers/harness.ts';

/**
 * A pull request's preview in a project whose previews are protected (docs/protection.md): the
 * comment and the check say so and how a reviewer gets in, and what they say works. The App runs
 * against the GitHub stand-in, whose calls are checked against GitHub's OpenAPI description.
 */
describe('previews of a protected project', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    h = await startHarness({ protection: 'previews' });
    dir = mkdtempSync(join(tmpdir(), 'slipway-bot-protected-'));
  });
  afterAll(async () => {
    expect(h?.github.violations()).toEqual([]);
    await h?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('says the preview is protected, and how to sign in or get a share link', async () => {
    const sha = h.push('feature-7', { 'message.txt': 'hello from pr 7' });
    await h.open({ number: 7, headSha: sha, headRef: 'feature-7' });
    const done = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.status === 'completed');
    expect(done.conclusion).toBe('success');
    const live = await h.client.deployments.get(done.external_id);
    expect(live).toMatchObject({ status: 'live', protected: true });
    // Really protected: a visitor without access is sent to sign in, on both URLs.
    for (const url of [live.url, live.branchUrl!]) {
      const res = await h.stack.fetchFromEdge(url);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get('location')!).pathname).toBe('/protection/sign-in');
    }
    const tab = live.dashboardUrl!.replace(`/deployments/${live.id}`, `/projects/${h.project.id}/protection`);
    const names = {
      [live.id]: '<dpl>',
      [sha]: '<sha>',
      [live.url]: '<url>',
      [new URL(live.url).host]: '<host>',
      [live.branchUrl!]: '<branch-url>',
      [new URL(live.branchUrl!).host]: '<branch-host>',
      [tab]: '<protection-tab>',
    };
    const comment = await waitFor('the live comment', () => {
      const body = h.github.sticky(7);
      return body && decodeState(body)?.preview?.status === 'live' ? body : undefined;
    });
    expect(normalise(comment, names)).toMatchInlineSnapshot(`
      "<!-- slipway-bot:preview -->
      ### Slipway preview

      | | |
      | :-- | :-- |
      | **Commit** | \`<sha7>\` |
      | **Status** | ✅ Live |
      | **Preview** | [<host>](<url>) |
      | **Branch URL** | [<branch-host>](<branch-url>) (always the newest live preview of the branch) |
      | **Access** | 🔒 Protected: open it and sign in with Slipway (members of the project’s organization). Anyone else needs a share link, which an admin makes on the [Protection tab](<protection-tab>) or \`slipway protection share <dpl>\`. |
      | **Logs** | [Build log](<dashboard-url>) · [Check run](<check-url>) |
      | **Updated** | <time> |

      <sub>Comment \`/slipway help\` for commands.</sub>
      <!-- slipway-bot:state <state> -->"
    `);
    expect(decodeState(comment)?.preview).toMatchObject({ protected: true, protectionUrl: tab });
    expect(normalise(done.output.summary, names)).toContain(
      '**Branch URL:** <branch-url> (always the newest live preview of `feature-7`)\n\n🔒 Protected: open it and sign in with Slipway',
    );

    // The tab is the dashboard's: a visitor without a session is asked to sign in, and comes back to it.
    const page = await fetch(tab, { redirect: 'manual' });
    expect(page.status).toBeGreaterThanOrEqual(300);
    expect(page.status).toBeLessThan(400);
    expect(decodeURIComponent(page.headers.get('location')!)).toContain(
      `/projects/${h.project.id}/protection`,
    );

    // The command it names, as a reviewer's admin runs it in the project's linked folder.
    const env = { SLIPWAY_API_URL: h.stack.apiUrl, SLIPWAY_TOKEN: h.botEnv.SLIPWAY_API_TOKEN! };
    const linked = await spawnCli(['link', h.project.name], dir, env);
    expect(linked.code, linked.stderr).toBe(0);
    const command = /`slipway (protection share dpl_[a-z0-9]+)`/.exec(comment)![1]!.split(' ');
    const shared = await spawnCli(command, dir, env);
    expect(shared.code, shared.stderr).toBe(0);
    const link = new URL(shared.stdout.trim());
    expect(link.host).toBe(new URL(live.url).host);
    const opened = await h.stack.fetchFromEdge(link.toString());
    expect(opened.status).toBe(302);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await h.stack.fetchFromEdge(live.url, { headers: { cookie } })).text()).toBe(
      '<h1>hello from pr 7</h1>',
    );
  });

  it('says nothing of access for previews anyone may open, nor in comments of older bots', () => {
    const preview = {
      deploymentId: 'dpl_aaaaaaaaaaaaaaaaaaaa',
      sha: 'a'.repeat(40),
      status: 'live' as const,
      url: 'http://web-1.localhost',
      logsUrl: null,
      error: null,
    };
    const state = { production: null, notes: [], closed: false, updatedAt: '2026-11-22T10:00:00.000Z' };
    for (const extra of [{}, { protected: false }]) {
      expect(renderComment({ ...state, preview: { ...preview, ...extra } })).not.toContain('Access');
    }
    // A failed preview has nothing to open.
    expect(
      renderComment({
        ...state,
        preview: { ...preview, status: 'failed', protected: true, protectionUrl: null },
      }),
    ).not.toContain('Access');
    expect(
      renderComment({ ...state, preview: { ...preview, protected: true, protectionUrl: null } }),
    ).toContain(
      'which an admin makes on the project’s Protection tab or `slipway protection share dpl_aaaaaaaaaaaaaaaaaaaa`.',
    );
  });
});

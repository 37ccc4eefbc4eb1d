import { createGitHubApi, type GitHubApi } from '../../helpers/github-api.ts';
import type { GitRepo } from '../../helpers/git-repo.ts';
import { COMMENT_MARKER } from '../../../bot/render/comment.ts';
import { INSTALLATION_ID, OWNER, REPO } from './payloads.ts';

export interface BotGitHub extends GitHubApi {
  /** `.github/slipway.yml` on the default branch; null: no such file. */
  config: string | null;
  /** login -> `permission` of GET .../collaborators/{username}/permission (default `read`). */
  permissions: Map<string, string>;
  /** Pull requests as `GET /pulls/{n}` answers them. */
  pulls: Map<number, any>;
  /** The bot's sticky comment on a pull request. */
  sticky(pull: number): string | undefined;
  /** Every comment but the sticky one: the replies. */
  replies(pull: number): string[];
  /** Check runs on a commit, oldest first. */
  checks(sha: string, name?: string): GitHubApi['state']['checkRuns'];
  /** GitHub Deployments of a pull request's preview environment. */
  deployments(pull: number): GitHubApi['state']['deployments'];
}

/**
 * The GitHub stand-in with what the bot reads besides its own writes: the App's installation
 * and tokens, the config file, permissions, pull requests, and files and commit messages read
 * from the real local git repository behind the pull requests.
 */
export async function createBotGitHub(repo: GitRepo): Promise<BotGitHub> {
  const api = (await createGitHubApi()) as BotGitHub;
  api.config = null;
  api.permissions = new Map();
  api.pulls = new Map();

  // Who the App is: answered for the App's JWT (issued by APP_ID 1), refused as GitHub does otherwise.
  api.on('GET /app', ({ headers }) => {
    const jwt = /^bearer (\S+)$/i.exec(String(headers.authorization ?? ''))?.[1];
    const claims = jwt
      ? (JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString() || '{}') as {
          iss?: unknown;
        })
      : {};
    if (String(claims.iss) !== '1') {
      return {
        status: 401,
        body: {
          message: 'A JSON web token could not be decoded',
          documentation_url: 'https://docs.github.com/rest',
        },
      };
    }
    return {
      body: {
        id: 1,
        slug: 'slipway-test',
        node_id: 'A_1',
        owner: null,
        name: 'Slipway (test)',
        description: null,
        external_url: 'https://example.com',
        html_url: 'https://github.com/apps/slipway-test',
        created_at: '2026-01-01T00:00:00Z',
        updated_at: '2026-01-01T00:00:00Z',
        permissions: {},
        events: [],
      },
    };
  });
  api.on('GET /repos/{owner}/{repo}/installation', () => ({
    body: { id: INSTALLATION_ID, account: { login: OWNER }, app_id: 1, target_type: 'User' },
  }));
  api.on('POST /app/installations/{installation_id}/access_tokens', () => ({
    status: 201,
    body: { token: 'ghs_stand_in_token', expires_at: new Date(Date.now() + 3600_000).toISOString() },
  }));
  api.on('GET /repos/{owner}/{repo}/contents/{path}', ({ params }) => {
    if (params.path !== '.github/slipway.yml' || api.config === null) {
      return { status: 404, body: { message: 'Not Found' } };
    }
    const content = Buffer.from(api.config).toString('base64');
    return {
      body: {
        type: 'file',
        encoding: 'base64',
        content,
        name: 'slipway.yml',
        path: params.path,
        sha: 'f'.repeat(40),
        size: api.config.length,
      },
    };
  });
  api.on('GET /repos/{owner}/{repo}/collaborators/{username}/permission', ({ params }) => {
    const permission = api.permissions.get(params.username!) ?? 'read';
    return { body: { permission, role_name: permission, user: { login: params.username } } };
  });
  api.on('GET /repos/{owner}/{repo}/pulls/{pull_number}', ({ params }) => {
    const pr = api.pulls.get(Number(params.pull_number));
    return pr ? { body: pr } : { status: 404, body: { message: 'Not Found' } };
  });
  api.on('GET /repos/{owner}/{repo}/pulls/{pull_number}/files', ({ params }) => {
    const pr = api.pulls.get(Number(params.pull_number));
    if (!pr) return { status: 404, body: { message: 'Not Found' } };
    const names = repo
      .git('diff', '--name-only', `${pr.base.ref}...${pr.head.sha}`)
      .split('\n')
      .filter(Boolean);
    return { body: names.map((filename) => ({ filename, status: 'modified' })) };
  });
  api.on('GET /repos/{owner}/{repo}/git/commits/{commit_sha}', ({ params }) => ({
    body: { sha: params.commit_sha, message: repo.git('log', '-1', '--format=%B', params.commit_sha!) },
  }));

  api.sticky = (pull) =>
    api.state.comments.find((c) => c.issue === pull && c.body.startsWith(COMMENT_MARKER))?.body;
  api.replies = (pull) =>
    api.state.comments
      .filter((c) => c.issue === pull && !c.body.startsWith(COMMENT_MARKER))
      .map((c) => c.body);
  api.checks = (sha, name) =>
    api.state.checkRuns.filter((r) => r.head_sha === sha && (!name || r.name === name));
  api.deployments = (pull) => api.state.deployments.filter((d) => d.environment === `preview/pr-${pull}`);
  return api;
}

export { OWNER, REPO };

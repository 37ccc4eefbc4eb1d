import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { INPUT_NAMES, readInputs } from '../../action/inputs.ts';
import { OUTPUT_NAMES } from '../../action/outputs.ts';
import { createGitHubApi, type GitHubApi } from '../helpers/github-api.ts';
import { startStub, type StubServer } from '../helpers/stub-server.ts';
import { BUNDLE, ensureBundle } from './bundle.ts';
import { pullRequestEvent, pushEvent, runAction } from './run-action.ts';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const TOKEN = 'slw_0123456789abcdefghijklmnopqrstuvwxyzABCD';

/** The bundle before it sends anything: bad inputs fail at once, a dry run sends nothing. */
describe('the action: inputs and dry run', () => {
  let api: StubServer;
  let gh: GitHubApi;

  beforeAll(async () => {
    [, api, gh] = await Promise.all([
      ensureBundle(),
      // Any request reaching it is a bug in these tests: it answers 500 and is recorded.
      startStub((_req, res) => {
        res.writeHead(500).end();
      }),
      createGitHubApi(),
    ]);
  }, 180_000);
  afterAll(async () => {
    await api?.close();
    await gh?.stop();
  });

  const run = (
    inputs: Record<string, string>,
    event = pushEvent({ sha: SHA, branch: 'main', message: 'Ship it' }),
  ) =>
    runAction({
      inputs: { 'api-url': api.url, 'api-token': TOKEN, project: 'site', 'github-token': 'ghs_x', ...inputs },
      event: event.event,
      env: { ...event.env, GITHUB_API_URL: gh.url, GITHUB_RUN_ID: '4242', GITHUB_JOB: 'ship' },
    });

  it.each([
    [{ command: 'deploi' }, 'Input "command" must be one of deploy, promote, rollback'],
    [
      { timeout: 'soon' },
      'Input "timeout" must be a duration such as 15m, 90s or 1h30m (at most 24h), got "soon"',
    ],
    [{ timeout: '0s' }, 'Input "timeout" must be a duration'],
    [
      { 'api-token': '' },
      'No api-token, and this job cannot ask GitHub for an OIDC token: give the job `permissions: id-token: write`',
    ],
    [{ 'api-url': 'ftp://example.com' }, 'Input "api-url" must be an http or https URL'],
    [{ wait: 'maybe' }, 'Input "wait" must be true or false'],
    [{ commit: 'main' }, 'Input "commit" must be 7 to 40 hexadecimal characters'],
    [{ 'rollback-on-failure': 'true' }, 'Input "rollback-on-failure" needs health-check-path'],
    [
      { 'deployment-id': 'dpl_0123456789abcdefghij' },
      'Input "deployment-id" is for the promote and rollback commands',
    ],
  ])('fails at once, naming the input: %o', async (inputs, message) => {
    const r = await run(inputs);
    expect(r.code).toBe(1);
    expect(r.error).toContain(message);
    expect(r.outputs).toEqual({});
    expect(api.requests).toHaveLength(0);
    expect(gh.calls).toHaveLength(0);
  });

  it('names every bad input in one message', async () => {
    const r = await run({ command: 'ship', timeout: '15 minutes', 'api-token': '' });
    expect(r.error!.split('\n')).toEqual([
      'Input "command" must be one of deploy, promote, rollback',
      'Input "timeout" must be a duration such as 15m, 90s or 1h30m (at most 24h), got "15 minutes"',
    ]);
  });

  it('a dry run prints exactly what would be sent, token masked, and sends nothing', async () => {
    const r = await run(
      { 'dry-run': 'true', project: 'prj_0123456789abcdefghij', 'github-deployment': 'true' },
      pullRequestEvent({ number: 12, headRef: 'feature/x', headSha: SHA }),
    );
    expect(r.error).toBeNull();
    expect(r.code).toBe(0);
    expect(r.outputs).toEqual({ status: 'dry-run' });
    expect(api.requests).toHaveLength(0);
    expect(gh.calls).toHaveLength(0);
    const out = r.stdout;
    expect(out).toContain(`::add-mask::${TOKEN}`);
    expect(out.split(TOKEN)).toHaveLength(2);
    const body = JSON.stringify({ branch: 'feature/x', commitHash: SHA, target: 'preview' });
    expect(out).toContain(
      [
        `POST ${api.url}/v1/projects/prj_0123456789abcdefghij/deployments`,
        '  Accept: application/json',
        '  User-Agent: slipway-action/1',
        '  Authorization: Bearer ***',
        '  Content-Type: application/json',
        // The key ends with a fingerprint of the body.
        '  Idempotency-Key: slipway-action:4242:1:ship:deploy:prj_0123456789abcdefghij:',
      ].join('\n'),
    );
    expect(out).toContain(`\n  ${body}\n`);
    expect(out).toContain(
      `GET ${api.url}/v1/deployments/<id of the new deployment>/logs?tail=10000&follow=true`,
    );
    expect(out).toContain(
      `GitHub: POST ${gh.url}/repos/octo-org/site/deployments (environment "preview/pr-12")`,
    );
    expect(out).toContain(`GitHub: GET ${gh.url}/repos/octo-org/site/issues/12/comments`);
  });

  it('a dry run of promote and rollback shows the lookups and the POST', async () => {
    const promote = await run({ 'dry-run': 'true', command: 'promote' });
    expect(promote.stdout).toContain(
      `GET ${api.url}/v1/projects/<id of project "site">/deployments?commitHash=${SHA}&status=live&limit=20`,
    );
    expect(promote.stdout).toContain(
      `POST ${api.url}/v1/deployments/<id of the latest live preview of 0123456>/promote`,
    );
    const rollback = await run({
      'dry-run': 'true',
      command: 'rollback',
      'deployment-id': 'dpl_0123456789abcdefghij',
    });
    expect(rollback.stdout).toContain(`POST ${api.url}/v1/deployments/dpl_0123456789abcdefghij/rollback`);
    expect(rollback.stdout).toContain(
      'Idempotency-Key: slipway-action:4242:1:ship:rollback:site:dpl_0123456789abcdefghij',
    );
    expect(api.requests).toHaveLength(0);
  });
});

describe('the action: retries', () => {
  it('waits out a 429 as Retry-After says and retries a 503, through api/client', async () => {
    await ensureBundle();
    const answers = [
      [429, { 'retry-after': '1' }, 'RATE_LIMIT_EXCEEDED'],
      [503, {}, 'SERVICE_UNAVAILABLE'],
      [401, {}, 'UNAUTHORIZED'],
    ] as const;
    const stub = await startStub((_req, res, i) => {
      const [status, headers, code] = answers[Math.min(i, 2)]!;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ success: false, error: { code, message: `answer ${i}` } }));
    });
    try {
      const started = Date.now();
      const r = await runAction({
        inputs: { 'api-url': stub.url, 'api-token': TOKEN, project: 'prj_0123456789abcdefghij' },
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(stub.requests.map((q) => `${q.method} ${q.url}`)).toEqual(
        Array(3).fill('GET /v1/projects/prj_0123456789abcdefghij'),
      );
      expect(r.code).toBe(1);
      expect(r.error).toContain('Slipway answered 401 UNAUTHORIZED: answer 2');
      expect(r.error).toContain('Check the api-token input');
    } finally {
      await stub.close();
    }
  });
});

describe('action.yml', () => {
  const yml = parse(readFileSync(new URL('../../action.yml', import.meta.url), 'utf8')) as {
    name: string;
    description: string;
    branding: { icon: string; color: string };
    inputs: Record<string, { description: string; required: boolean; default?: string }>;
    outputs: Record<string, { description: string }>;
    runs: { using: string; main: string };
  };

  it('runs the committed bundle on node24 and documents every input and output', () => {
    expect(yml.runs).toEqual({ using: 'node24', main: 'dist/action/index.js' });
    expect(existsSync(BUNDLE)).toBe(true);
    expect(yml.name).toBeTruthy();
    expect(yml.branding.icon).toBeTruthy();
    expect(Object.keys(yml.inputs)).toEqual(INPUT_NAMES);
    expect(Object.keys(yml.outputs)).toEqual([...OUTPUT_NAMES]);
    for (const i of Object.values(yml.inputs)) expect(i.description.length).toBeGreaterThan(10);
    for (const o of Object.values(yml.outputs)) expect(o.description.length).toBeGreaterThan(10);
    expect(
      Object.entries(yml.inputs)
        .filter(([, i]) => i.required)
        .map(([n]) => n),
    ).toEqual(['api-url', 'project']);
  });

  it("its defaults are the action's own defaults", () => {
    const required = { 'api-url': 'http://127.0.0.1:1', 'api-token': TOKEN, project: 'site' };
    const env = (values: Record<string, string>) => (name: string) => values[name] ?? '';
    const withDefaults: Record<string, string> = { ...required };
    for (const [name, input] of Object.entries(yml.inputs)) {
      // The runner fills ${{ github.token }} in; here there is no workflow to read it from.
      if (input.default !== undefined && name !== 'github-token') withDefaults[name] = input.default;
    }
    expect(readInputs(env(withDefaults))).toEqual(readInputs(env(required)));
  });
});

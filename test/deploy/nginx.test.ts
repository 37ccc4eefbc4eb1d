import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../server/core/free-port.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
if (!NGINX)
  process.stderr.write(
    'NOTICE: nginx is missing (apt-get install nginx): the reverse proxy test is skipped.\n',
  );

const DEPLOY = resolve(import.meta.dirname, '../../deploy/nginx');
const API_HOST = 'api.example.test';
const BOT_HOST = 'bot.example.test';
const APPS = 'apps.example.test';

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * deploy/nginx/slipway.conf.template, filled in as docs/operating.md says, in front of the whole
 * service on 127.0.0.1 with a wildcard certificate made here: the API, a followed build log, a
 * deployment under the wildcard name and the GitHub App's webhooks, all over HTTPS.
 */
describe.skipIf(!NGINX)('Slipway behind nginx (deploy/nginx)', () => {
  let dir: string;
  let s: Stack;
  let nginx: ChildProcess;
  let bot: Server;
  let repo: GitRepo;
  let https: number;
  let http: number;
  let cert: string;
  const botSaw: { path: string; proto: string | undefined; host: string | undefined }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'slipway-nginx-'));
    chmodSync(dir, 0o755);
    // One certificate for the API, the App and every deployment (a wildcard), as a CA of itself.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-subj',
        '/CN=example.test',
        '-addext',
        `subjectAltName=DNS:${API_HOST},DNS:${BOT_HOST},DNS:*.${APPS}`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
      ],
      { stdio: 'pipe' },
    );
    chmodSync(join(dir, 'key.pem'), 0o644);
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    [https, http] = [await findFreePort(), await findFreePort()];

    s = await startStack({
      env: {
        SLIPWAY_DOMAIN: APPS,
        SLIPWAY_PUBLIC_EDGE_URL: `https://${APPS}:${https}`,
        SLIPWAY_PUBLIC_API_URL: `https://${API_HOST}:${https}`,
      },
    });
    bot = createServer((req, res) => {
      botSaw.push({
        path: req.url ?? '',
        proto: req.headers['x-forwarded-proto'] as string | undefined,
        host: req.headers.host,
      });
      req.resume();
      req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    await new Promise<void>((r) => bot.listen(0, '127.0.0.1', r));

    const values: Record<string, string> = {
      SLIPWAY_API_HOST: API_HOST,
      SLIPWAY_BOT_HOST: BOT_HOST,
      SLIPWAY_APPS_DOMAIN: APPS,
      SLIPWAY_API_UPSTREAM: new URL(s.apiUrl).host,
      SLIPWAY_BOT_UPSTREAM: `127.0.0.1:${(bot.address() as AddressInfo).port}`,
      SLIPWAY_EDGE_UPSTREAM: `127.0.0.1:${s.edgePort}`,
      SLIPWAY_TLS_CERT: join(dir, 'cert.pem'),
      SLIPWAY_TLS_KEY: join(dir, 'key.pem'),
      SLIPWAY_HTTPS_PORT: String(https),
      SLIPWAY_HTTP_PORT: String(http),
    };
    // As envsubst does: only these names; nginx's own $variables stay.
    const template = readFileSync(join(DEPLOY, 'slipway.conf.template'), 'utf8');
    const filled = template.replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => values[name] ?? whole);
    const directives = filled.split('\n').filter((l) => !l.trim().startsWith('#'));
    expect(directives.join('\n')).not.toMatch(/\$\{[A-Z_]+\}/);
    writeFileSync(join(dir, 'slipway.conf'), filled);
    copyFileSync(join(DEPLOY, 'slipway-proxy.conf'), join(dir, 'slipway-proxy.conf'));
    writeFileSync(
      join(dir, 'nginx.conf'),
      `pid ${dir}/nginx.pid;\nerror_log stderr warn;\nevents {}\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  include slipway.conf;\n}\n`,
    );
    execFileSync(NGINX!, ['-t', '-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'pipe' });
    nginx = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await waitFor(
      'nginx to listen',
      async () => (await get(API_HOST, '/healthz').catch(() => null))?.status === 200,
      10_000,
    );
    repo = createGitRepo({ files: { 'index.html': '<h1>through the proxy</h1>' } });
  }, 60_000);

  afterAll(async () => {
    nginx?.kill('SIGTERM');
    if (nginx && nginx.exitCode === null) await new Promise((r) => nginx.once('exit', r));
    await new Promise((r) => bot?.close(r));
    await s?.stop();
    repo?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A request to nginx on 127.0.0.1 for `host`, over TLS with SNI, trusting only the test's certificate. */
  function get(
    host: string,
    path: string,
    opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ): Promise<Answer> {
    return new Promise((done, fail) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: https,
          path,
          method: opts.method ?? 'GET',
          servername: host,
          ca: cert,
          agent: false,
          headers: { host, ...opts.headers },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', fail);
      req.end(opts.body);
    });
  }

  it('serves the API and the dashboard over HTTPS, and sends plain HTTP to HTTPS', async () => {
    const ready = await get(API_HOST, '/readyz');
    expect(ready.status).toBe(200);
    const signIn = await get(API_HOST, '/sign-in');
    expect(signIn.status).toBe(200);
    expect(signIn.body).toContain('Sign in to Slipway');
    const redirect = await new Promise<IncomingMessage>((done, fail) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: http, path: '/v1/user', headers: { host: API_HOST } },
        (res) => {
          res.resume();
          done(res);
        },
      );
      req.on('error', fail);
      req.end();
    });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe(`https://${API_HOST}/v1/user`);
  });

  it('deploys, follows the build log through the proxy, and serves the deployment under the wildcard name', async () => {
    const { token, orgId } = await s.user();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const project = JSON.parse(
      (
        await get(API_HOST, '/v1/projects', {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ name: 'proxied', repositoryUrl: repo.url, organizationId: orgId }),
        })
      ).body,
    ).data;
    const deployment = JSON.parse(
      (
        await get(API_HOST, `/v1/projects/${project.id}/deployments`, {
          method: 'POST',
          headers: auth,
          body: '{}',
        })
      ).body,
    ).data;
    expect(deployment.url).toMatch(
      new RegExp(`^https://proxied-[a-z0-9]+\\.${APPS.replaceAll('.', '\\.')}:${https}$`),
    );
    expect(deployment.dashboardUrl).toBe(`https://${API_HOST}:${https}/deployments/${deployment.id}`);

    const log = await get(API_HOST, `/v1/deployments/${deployment.id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(log.headers['content-type']).toContain('text/event-stream');
    expect(log.body).toContain('==> Live at');
    expect(log.body).toMatch(/event: end\ndata: \{"status":"live"/);

    const page = await get(new URL(deployment.url).hostname, '/');
    expect(page.status).toBe(200);
    expect(page.body).toBe('<h1>through the proxy</h1>');
    const production = await get(`proxied.${APPS}`, '/');
    expect(production.body).toBe('<h1>through the proxy</h1>');
  });

  it('passes GitHub’s webhooks to the App, and nothing else on its name', async () => {
    const res = await get(BOT_HOST, '/api/github/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(202);
    expect(botSaw.at(-1)).toEqual({ path: '/api/github/webhooks', proto: 'https', host: BOT_HOST });
    expect((await get(BOT_HOST, '/v1/user')).status).toBe(404);
  });
});

import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactReader } from '../../../server/features/serving/edge/artifact-reader.ts';
import {
  createRuntimeLauncher,
  type RuntimeLauncher,
} from '../../../server/features/serving/edge/launcher.ts';
import { createHostResolver } from '../../../server/features/serving/edge/resolve-host.ts';
import {
  createRuntimeSupervisor,
  type RuntimeSupervisor,
} from '../../../server/features/serving/edge/runtime.ts';
import { createEdgeServer } from '../../../server/features/serving/edge/server.ts';
import { createServiceSandbox } from '../../../server/platform/sandbox/index.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { edgeRequest, insertDeployment, insertProject, listen, storeSite } from '../../helpers/edge.ts';

/** Counts and logs every request it gets, and answers with what it saw. */
const APP = `
import { createServer } from 'node:http';
let requests = 0;
createServer((req, res) => {
  requests++;
  console.log('got ' + req.method + ' ' + req.url);
  res.setHeader('content-type', 'application/json');
  res.setHeader('x-frame-options', 'SAMEORIGIN');
  res.setHeader('set-cookie', 'session=abc');
  res.end(JSON.stringify({ url: req.url, requests }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const REDIRECTS = `/old/*      /new/:splat     301
/docs       https://docs.example.com/   302
/spa/*      /index?from=spa 200
/gone       /not-found      404
`;

const HEADERS = `/*
  X-Frame-Options: DENY
  X-Robots-Tag: noindex
  Set-Cookie: seen=1
/api/*
  ! X-Robots-Tag
`;

describe('edge: _redirects and _headers in front of a server app', () => {
  let t: TestApp;
  let supervisor: RuntimeSupervisor;
  let launcher: RuntimeLauncher;
  let edge: Server;
  let port: number;
  let deploymentId: string;
  let host: string;
  const lines: string[] = [];

  const get = (path: string, opts?: Parameters<typeof edgeRequest>[3]) =>
    edgeRequest(port, `${host}.localhost`, path, opts);
  /** The paths the app was asked for, from its own log. */
  const appSaw = () => lines.filter((l) => l.startsWith('got ')).map((l) => l.slice(4));

  beforeAll(async () => {
    t = await createTestApp();
    const orgId = (await t.user('alice@example.com')).orgId;
    const root = t.deps.config.artifactsDir;
    const artifactId = await storeSite(root, {
      'server.mjs': APP,
      _redirects: REDIRECTS,
      _headers: HEADERS,
    });
    const project = await insertProject(t, orgId);
    const d = await insertDeployment(t, project.id, {
      artifact_id: artifactId,
      runtime: JSON.stringify({ kind: 'node', spa: false, startCommand: 'node server.mjs' }),
    });
    deploymentId = d.id;
    host = d.host;
    supervisor = createRuntimeSupervisor({
      sandbox: await createServiceSandbox(t.deps.config),
      log: (_id, line, stream) => {
        if (stream !== 'supervisor') lines.push(line);
      },
      startTimeoutMs: 10_000,
    });
    const artifacts = createArtifactReader(root);
    launcher = createRuntimeLauncher({
      supervisor,
      artifacts,
      runtimesDir: join(t.dataDir, 'runtimes'),
      env: async () => ({}),
    });
    edge = createEdgeServer({
      resolver: createHostResolver(t.deps, { ttlMs: 0 }),
      artifactsRoot: root,
      artifacts,
      supervisor,
      launcher,
    });
    port = await listen(edge);
  });
  afterAll(async () => {
    launcher.close();
    await supervisor.stopAll();
    await new Promise((r) => edge.close(r));
    await t.close();
  });

  it('answers a redirect from the edge without starting the app', async () => {
    const res = await get('/old/guide/intro?lang=en');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/new/guide/intro?lang=en');
    expect(res.headers['x-slipway-deployment']).toBe(deploymentId);
    expect(res.headers['x-frame-options']).toBe('DENY');
    const out = await get('/docs');
    expect(out.status).toBe(302);
    expect(out.headers.location).toBe('https://docs.example.com/');
    expect(supervisor.status(deploymentId)).toBeUndefined();
  });

  it("adds _headers to the app's answers, replacing its own and keeping its cookies", async () => {
    const res = await get('/page');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ url: '/page', requests: 1 });
    expect(supervisor.status(deploymentId)?.state).toBe('running');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-robots-tag']).toBe('noindex');
    expect(res.headers['set-cookie']).toEqual(['session=abc', 'seen=1']);
    expect(res.headers['x-slipway-deployment']).toBe(deploymentId);
    const api = await get('/api/items');
    expect(api.headers['x-robots-tag']).toBeUndefined();
    expect(api.headers['x-frame-options']).toBe('DENY');
  });

  it('answers redirects without the running app ever seeing them', async () => {
    const before = appSaw().length;
    for (let i = 0; i < 3; i++) expect((await get(`/old/${i}`)).status).toBe(301);
    const res = await get('/count');
    expect(JSON.parse(res.text).requests).toBe(before + 1);
    await expect.poll(() => appSaw()).toContain('GET /count');
    expect(appSaw().some((path) => path.includes('/old/'))).toBe(false);
  });

  it('rewrites to another path of the app, and turns its 200 into a 404 for a 404 rule', async () => {
    const spa = await get('/spa/deep/route?tab=2');
    expect(spa.status).toBe(200);
    // The destination's own query replaces the request's.
    expect(JSON.parse(spa.text).url).toBe('/index?from=spa');
    const gone = await get('/gone');
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.text).url).toBe('/not-found');
    expect(gone.headers['x-frame-options']).toBe('DENY');
  });
});

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProtectionGate } from '../../../server/edge/protection-gate.ts';
import type { HostResolver, Resolution } from '../../../server/edge/resolve-host.ts';
import { createEdgeServer } from '../../../server/edge/server.ts';
import { sha256, signGrant } from '../../../server/services/protection/protection-cookie.ts';
import { edgeRequest, listen } from '../../helpers/edge.ts';

const KEY = new Uint8Array(32).fill(3);
const SECRET = `slwb_${'s'.repeat(43)}`;

/**
 * The edge in front of a server app on a protected host: what the app receives. Neither the
 * protection cookie nor the bypass secret ever reaches it (it could log them, or set the cookie
 * on a visitor of another host); the app's own cookies do.
 */
describe('protection gate before a server app', () => {
  let app: Server;
  let edge: Server;
  let edgePort = 0;
  let seen: IncomingHttpHeaders[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'slipway-gate-'));
  const now = new Date('2026-11-26T12:00:00.000Z');

  beforeAll(async () => {
    app = createServer((req, res) => {
      seen.push(req.headers);
      res.end('from the app');
    });
    const appPort = await listen(app);
    const resolution = (protect: boolean): Resolution => ({
      kind: 'target',
      target: {
        projectId: 'prj_aaaaaaaaaaaaaaaaaaaa',
        deploymentId: 'dpl_aaaaaaaaaaaaaaaaaaaa',
        artifactId: null,
        kind: 'node',
        spa: false,
        environment: 'preview',
        runtime: { port: appPort },
        ...(protect ? { protection: { bypassHash: sha256(SECRET) } } : {}),
      },
    });
    const resolver: HostResolver = {
      resolve: async (host) => resolution(!String(host).startsWith('open.')),
      peek: () => undefined,
      invalidate: () => {},
    };
    edge = createEdgeServer({
      resolver,
      artifactsRoot: dir,
      protection: createProtectionGate({
        key: KEY,
        now: () => now,
        dashboardUrl: () => 'http://dash.test',
        httpsPublic: false,
        useCode: async () => null,
        findLink: async () => null,
      }),
    });
    edgePort = await listen(edge);
  });
  afterAll(async () => {
    await new Promise((r) => edge.close(r));
    await new Promise((r) => app.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('strips the protection cookie and keeps the app’s own', async () => {
    seen = [];
    const grant = await signGrant(KEY, {
      projectId: 'prj_aaaaaaaaaaaaaaaaaaaa',
      host: 'web.localhost',
      expiresAt: now.getTime() + 60_000,
    });
    const res = await edgeRequest(edgePort, 'web.localhost', '/', {
      headers: { cookie: `theme=dark; slipway_protection=${grant}; cart=3` },
    });
    expect(res.text).toBe('from the app');
    expect(seen[0]!.cookie).toBe('theme=dark; cart=3');
    // Alone, the header goes altogether.
    await edgeRequest(edgePort, 'web.localhost', '/', { headers: { cookie: `slipway_protection=${grant}` } });
    expect(seen[1]!.cookie).toBeUndefined();
  });

  it('takes the bypass secret off every request, protected host or not', async () => {
    seen = [];
    const through = await edgeRequest(edgePort, 'web.localhost', '/', {
      headers: { 'x-slipway-protection-bypass': SECRET },
    });
    expect(through.text).toBe('from the app');
    await edgeRequest(edgePort, 'open.localhost', '/', {
      headers: { 'x-slipway-protection-bypass': SECRET },
    });
    expect(seen).toHaveLength(2);
    for (const headers of seen) expect(JSON.stringify(headers)).not.toContain(SECRET);
  });

  it('sends a visitor without the cookie to sign in, and the app sees nothing', async () => {
    seen = [];
    const res = await edgeRequest(edgePort, 'web.localhost:8080', '/a?b=1');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(
      `http://dash.test/protection/sign-in?url=${encodeURIComponent('http://web.localhost:8080/a?b=1')}`,
    );
    expect(res.headers['cache-control']).toBe('no-store');
    // A cookie signed with another key, or for another host, is no cookie.
    const foreign = await signGrant(new Uint8Array(32).fill(4), {
      projectId: 'prj_aaaaaaaaaaaaaaaaaaaa',
      host: 'web.localhost',
      expiresAt: now.getTime() + 60_000,
    });
    const other = await signGrant(KEY, {
      projectId: 'prj_aaaaaaaaaaaaaaaaaaaa',
      host: 'web2.localhost',
      expiresAt: now.getTime() + 60_000,
    });
    for (const value of [foreign, other]) {
      const r = await edgeRequest(edgePort, 'web.localhost', '/', {
        headers: { cookie: `slipway_protection=${value}` },
      });
      expect(r.status).toBe(302);
    }
    expect(seen).toHaveLength(0);
  });
});

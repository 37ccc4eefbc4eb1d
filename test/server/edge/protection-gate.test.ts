import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProtectionGate } from '../../../server/features/serving/edge/protection-gate.ts';
import type { HostResolver, Resolution } from '../../../server/features/serving/edge/resolve-host.ts';
import { privateCacheControl } from '../../../server/features/serving/edge/private-answers.ts';
import { createEdgeServer } from '../../../server/features/serving/edge/server.ts';
import { sha256, signGrant } from '../../../server/features/serving/protection/protection-cookie.ts';
import { edgeRequest, listen, upgradeStatus } from '../../helpers/edge.ts';

const KEY = new Uint8Array(32).fill(3);
const MEMBER = 'usr_member0000000000000';
const NEWCOMER = 'usr_newcomer000000000000';
const CODE = 'one-time-code';
const SECRET = `slwb_${'s'.repeat(43)}`;
const SHARE_TOKEN = `slws_${'t'.repeat(43)}`;
const PROJECT = 'prj_aaaaaaaaaaaaaaaaaaaa';
const BUILDING = 'dpl_bbbbbbbbbbbbbbbbbbbb';

/** The app's answer fields by path: what it says to caches. */
const ANSWERS: Record<string, Record<string, string>> = {
  '/shared': {
    'cache-control': 'public, s-maxage=600, max-age=60',
    'cdn-cache-control': 'max-age=600',
    'vercel-cdn-cache-control': 'max-age=3600',
    'surrogate-control': 'max-age=600',
  },
  '/quoted': { 'cache-control': 'no-cache="Set-Cookie, X-A", PUBLIC, max-age=5, proxy-revalidate' },
  '/private-field': { 'cache-control': 'private="x-user", max-age=30' },
};

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
  /** The project's share links as the resolver last read them. */
  const links = new Set<string>();
  /** The organization's members as the resolver last read them. */
  const members = new Set<string>([MEMBER]);
  /** The projects whose routes the gate asked the edge to look up again. */
  const forgotten: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'slipway-gate-'));
  const now = new Date('2026-11-26T12:00:00.000Z');

  beforeAll(async () => {
    app = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, ANSWERS[req.url ?? '/'] ?? {});
      res.end('from the app');
    });
    const appPort = await listen(app);
    const protection = { bypassHash: sha256(SECRET), links, members };
    const resolution = (protect: boolean): Resolution => ({
      kind: 'target',
      target: {
        projectId: PROJECT,
        deploymentId: 'dpl_aaaaaaaaaaaaaaaaaaaa',
        artifactId: null,
        kind: 'node',
        spa: false,
        environment: 'preview',
        runtime: { port: appPort },
        ...(protect ? { protection } : {}),
      },
    });
    const resolver: HostResolver = {
      resolve: async (host) =>
        String(host).startsWith('building.')
          ? { kind: 'not-ready', projectId: PROJECT, deploymentId: BUILDING, status: 'building', protection }
          : resolution(!String(host).startsWith('open.')),
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
        useCode: async (hash) =>
          hash === sha256(CODE) ? { projectId: PROJECT, host: 'web.localhost', userId: NEWCOMER } : null,
        findLink: async (hash) =>
          hash === sha256(SHARE_TOKEN)
            ? { id: 'psl_new', projectId: PROJECT, expiresAt: now.getTime() + 86_400_000 }
            : null,
        forget: (projectId) => forgotten.push(projectId),
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
      user: MEMBER,
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
      user: MEMBER,
    });
    const other = await signGrant(KEY, {
      projectId: 'prj_aaaaaaaaaaaaaaaaaaaa',
      host: 'web2.localhost',
      expiresAt: now.getTime() + 60_000,
      user: MEMBER,
    });
    for (const value of [foreign, other]) {
      const r = await edgeRequest(edgePort, 'web.localhost', '/', {
        headers: { cookie: `slipway_protection=${value}` },
      });
      expect(r.status).toBe(302);
    }
    expect(seen).toHaveLength(0);
  });

  it('makes a protected host’s app answers private, whatever the app says to shared caches', async () => {
    const grant = await signGrant(KEY, {
      projectId: PROJECT,
      host: 'web.localhost',
      expiresAt: now.getTime() + 60_000,
      user: MEMBER,
    });
    const cookie = `slipway_protection=${grant}`;
    const cases: [path: string, guarded: string][] = [
      ['/shared', 'private, max-age=60'],
      ['/', 'private'],
      ['/quoted', 'private, no-cache="Set-Cookie, X-A", max-age=5'],
      ['/private-field', 'private, max-age=30'],
    ];
    for (const [path, expected] of cases) {
      for (const headers of [{ cookie }, { 'x-slipway-protection-bypass': SECRET }] as Record<
        string,
        string
      >[]) {
        const res = await edgeRequest(edgePort, 'web.localhost', path, { headers });
        expect(res.text).toBe('from the app');
        expect({ path, cc: res.headers['cache-control'] }).toEqual({ path, cc: expected });
        for (const cdn of ['cdn-cache-control', 'vercel-cdn-cache-control', 'surrogate-control'])
          expect(res.headers[cdn]).toBeUndefined();
      }
    }
    // Unprotected: the app's fields as it sent them.
    const open = await edgeRequest(edgePort, 'open.localhost', '/shared');
    expect(open.headers['cache-control']).toBe('public, s-maxage=600, max-age=60');
    expect(open.headers['cdn-cache-control']).toBe('max-age=600');
    expect(open.headers['surrogate-control']).toBe('max-age=600');
    expect((await edgeRequest(edgePort, 'open.localhost', '/')).headers['cache-control']).toBeUndefined();
  });

  it('keeps the building page of a protected host behind the gate, upgrades included', async () => {
    const res = await edgeRequest(edgePort, 'building.localhost', '/');
    expect(res.status).toBe(302);
    expect(res.headers['x-slipway-deployment']).toBeUndefined();
    expect(res.text).toBe('');
    expect(await upgradeStatus(edgePort, 'building.localhost')).toBe(401);
    const grant = await signGrant(KEY, {
      projectId: PROJECT,
      host: 'building.localhost',
      expiresAt: now.getTime() + 60_000,
      user: MEMBER,
    });
    const cookie = `slipway_protection=${grant}`;
    const seenPage = await edgeRequest(edgePort, 'building.localhost', '/', { headers: { cookie } });
    expect(seenPage.status).toBe(503);
    expect(seenPage.headers['cache-control']).toBe('private, no-store');
    expect(seenPage.headers['x-slipway-deployment']).toBe(BUILDING);
    expect(seenPage.text).toContain(`Deployment ${BUILDING} is building`);
    // Let through, the upgrade finds nothing to switch to, as on any host without a running app.
    expect(await upgradeStatus(edgePort, 'building.localhost', { cookie })).toBe(404);
  });

  it('opens a share link’s cookie only while the host’s routes list its link', async () => {
    forgotten.length = 0;
    const opened = await edgeRequest(edgePort, 'web.localhost', `/_slipway/share?token=${SHARE_TOKEN}`);
    expect(opened.status).toBe(302);
    expect(opened.headers['cache-control']).toBe('no-store');
    // Not listed yet (made since the routes were read): the edge is told to read them again.
    expect(forgotten).toEqual([PROJECT]);
    const cookie = opened.headers['set-cookie']![0]!.split(';')[0]!;
    expect((await edgeRequest(edgePort, 'web.localhost', '/', { headers: { cookie } })).status).toBe(302);
    links.add('psl_new');
    try {
      expect((await edgeRequest(edgePort, 'web.localhost', '/', { headers: { cookie } })).status).toBe(200);
      forgotten.length = 0;
      await edgeRequest(edgePort, 'web.localhost', `/_slipway/share?token=${SHARE_TOKEN}`);
      expect(forgotten).toEqual([]);
    } finally {
      links.delete('psl_new');
    }
    // Revoked (gone from the list): refused again.
    expect((await edgeRequest(edgePort, 'web.localhost', '/', { headers: { cookie } })).status).toBe(302);
  });

  it('opens a member’s sign-in cookie only while the host’s routes list the member', async () => {
    forgotten.length = 0;
    const signedIn = await edgeRequest(edgePort, 'web.localhost', `/_slipway/auth?code=${CODE}&next=/x`);
    expect(signedIn.status).toBe(302);
    expect(signedIn.headers.location).toBe('/x');
    // Joined since the routes were read: the edge is told to read them again.
    expect(forgotten).toEqual([PROJECT]);
    const cookie = signedIn.headers['set-cookie']![0]!.split(';')[0]!;
    expect((await edgeRequest(edgePort, 'web.localhost', '/', { headers: { cookie } })).status).toBe(302);
    members.add(NEWCOMER);
    try {
      const res = await edgeRequest(edgePort, 'web.localhost', '/', { headers: { cookie } });
      expect(res.status).toBe(200);
      expect(res.text).toBe('from the app');
    } finally {
      members.delete(NEWCOMER);
    }
    // Removed from the organization (gone from the list): refused again.
    const refused = await edgeRequest(edgePort, 'web.localhost', '/', { headers: { cookie } });
    expect(refused.status).toBe(302);
    expect(refused.text).toBe('');
    // A cookie that names neither a member nor a link (signed before cookies named them) opens nothing.
    const anonymous = await signGrant(KEY, {
      projectId: PROJECT,
      host: 'web.localhost',
      expiresAt: now.getTime() + 60_000,
    });
    expect(
      (
        await edgeRequest(edgePort, 'web.localhost', '/', {
          headers: { cookie: `slipway_protection=${anonymous}` },
        })
      ).status,
    ).toBe(302);
  });
});

describe('privateCacheControl', () => {
  it('keeps what a browser reads and drops what lets a shared cache keep the answer', () => {
    expect(privateCacheControl([])).toBe('private');
    expect(privateCacheControl(['public, max-age=31536000, immutable'])).toBe(
      'private, max-age=31536000, immutable',
    );
    expect(privateCacheControl(['no-store'])).toBe('private, no-store');
    expect(privateCacheControl(['public', 'S-MAXAGE=10, stale-while-revalidate=30'])).toBe(
      'private, stale-while-revalidate=30',
    );
    expect(privateCacheControl(['private, private, max-age=1'])).toBe('private, max-age=1');
  });
});

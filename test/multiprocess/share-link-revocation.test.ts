import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../server/core/free-port.ts';
import { requestWithHost } from '../../server/core/http-get.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { deploymentRow, storeSite } from '../helpers/edge.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/**
 * Revoking a share link ends the cookies it set on every edge: the API, worker and one edge run
 * in this process, a second edge in a `slipway serve --role edge` child process, on one
 * PostgreSQL database and one artifacts directory. Both edges keep routes for 10 minutes
 * (SLIPWAY_EDGE_ROUTE_TTL), so only the routing signal can reach the other one in time.
 */
describe.skipIf(!url)(
  `revoking a share link, or a member, on every edge process${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let root: string;
    let main: Stack;
    let other: ChildProcess;
    let otherPort: number;
    let baseEnv: Record<string, string>;

    const cleanEnv = (): NodeJS.ProcessEnv =>
      Object.fromEntries(
        Object.entries(process.env).filter(([k]) => !k.startsWith('SLIPWAY_') && k !== 'DATABASE_URL'),
      );

    beforeAll(async () => {
      database = await createTestDatabase();
      root = mkdtempSync(join(tmpdir(), 'slipway-revoke-'));
      baseEnv = {
        DATABASE_URL: database.url,
        SLIPWAY_DB_POOL_SIZE: '4',
        SLIPWAY_ARTIFACTS_DIR: join(root, 'artifacts'),
        // One key for every process: a cookie one edge set, the other reads.
        SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
        SLIPWAY_DEFAULT_PROTECTION: 'previews',
        SLIPWAY_EDGE_ROUTE_TTL: '10m',
        HOST: '127.0.0.1',
      };
      // This process migrates the database first.
      main = await startStack({ dataDir: join(root, 'main'), env: baseEnv });
      otherPort = await findFreePort();
      other = spawn(process.execPath, ['bin/slipway.js', 'serve', '--role', 'edge'], {
        env: {
          ...cleanEnv(),
          ...baseEnv,
          SLIPWAY_EDGE_PORT: String(otherPort),
          SLIPWAY_DATA_DIR: join(root, 'other'),
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', openSync(join(root, 'other.log'), 'a')],
      });
      await waitFor(
        'the other edge to answer',
        async () => (await visit(otherPort, 'nothing.localhost').catch(() => null))?.status === 404,
        60_000,
        50,
      );
    }, 120_000);

    afterAll(async () => {
      if (other && other.exitCode !== null && other.exitCode !== 0) {
        console.error(
          `the edge process exited with ${other.exitCode}:\n${readFileSync(join(root, 'other.log'), 'utf8')}`,
        );
      }
      if (other?.exitCode === null) {
        await new Promise((r) => {
          other.once('exit', r);
          other.kill('SIGTERM');
        });
      }
      await main?.stop();
      await database?.drop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    /** A request to one edge (by port) with this Host header. */
    const visit = (port: number, host: string, path = '/', headers: Record<string, string> = {}) =>
      requestWithHost({ origin: `http://127.0.0.1:${port}`, host, path, method: 'GET', headers });

    it('a revoked link’s cookie is refused by both edges, at once', async () => {
      const { token, orgId } = await main.user('revoke@example.com');
      const client = main.client(token);
      const project = await client.projects.create({ name: 'shared', organizationId: orgId });
      expect(project.protection).toBe('previews');
      const deps = main.running.deps;
      const artifactId = await storeSite(deps.config.artifactsDir, { 'index.html': 'the preview' });
      const row = deploymentRow(project.id, new Date().toISOString(), {
        target: 'preview',
        branch: 'feature',
        artifact_id: artifactId,
        runtime: JSON.stringify({ kind: 'static', spa: false }),
      });
      await deps.db.insertInto('deployments').values(row).execute();
      const host = `${row.host}.localhost`;
      const edges = [main.edgePort, otherPort];
      // Both edges look the host up (and keep it for 10 minutes) before the link exists.
      for (const port of edges) expect((await visit(port, host)).status).toBe(302);

      const link = await client.protection.share(project.id, { deploymentId: row.id });
      const share = new URL(link.url);
      // Opened on the other edge: its cookie opens the host on both.
      const opened = await visit(otherPort, host, `${share.pathname}${share.search}`);
      expect(opened.status).toBe(302);
      const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
      for (const port of edges) {
        const res = await visit(port, host, '/', { cookie });
        expect(res.status).toBe(200);
        expect(await res.text()).toBe('the preview');
      }

      await client.protection.revokeLink(project.id, link.id);
      // This process's edge heard it before the API answered; the other through LISTEN/NOTIFY.
      expect((await visit(main.edgePort, host, '/', { cookie })).status).toBe(302);
      const refused = await waitFor(
        'the other edge to refuse the cookie',
        async () => {
          const res = await visit(otherPort, host, '/', { cookie });
          return res.status === 302 ? res : null;
        },
        5000,
      );
      expect(new URL(refused.headers.get('location')!).pathname).toBe('/protection/sign-in');
      expect(await refused.text()).toBe('');
      expect((await visit(otherPort, host, `${share.pathname}${share.search}`)).status).toBe(403);
    });

    /** A member's protection cookie for `host`, signed in through the dashboard and taken on the other edge. */
    async function memberCookie(token: string, host: string): Promise<string> {
      const signIn = await fetch(`${main.apiUrl}/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, next: '/' }),
      });
      const session = signIn.headers.get('set-cookie')!.split(';')[0]!;
      const page = await fetch(
        `${main.apiUrl}/protection/sign-in?url=${encodeURIComponent(`http://${host}/`)}`,
        {
          headers: { cookie: session },
        },
      );
      expect(page.status).toBe(200);
      const to = new URL(
        /http-equiv="refresh" content="0;url=([^"]+)"/.exec(await page.text())![1]!.replaceAll('&amp;', '&'),
      );
      const back = await visit(otherPort, host, `${to.pathname}${to.search}`);
      expect(back.status).toBe(302);
      return back.headers.get('set-cookie')!.split(';')[0]!;
    }

    it('a removed member’s sign-in cookie is refused by both edges, at once; a remaining member’s is not', async () => {
      const owner = await main.user('owner-of-team@example.com');
      const leaving = await main.user('leaving2@example.com');
      const client = main.client(owner.token);
      await client.organizations.members.invite(owner.orgId, {
        email: 'leaving2@example.com',
        role: 'viewer',
      });
      const project = await client.projects.create({ name: 'team', organizationId: owner.orgId });
      const deps = main.running.deps;
      const artifactId = await storeSite(deps.config.artifactsDir, { 'index.html': 'the team preview' });
      const row = deploymentRow(project.id, new Date().toISOString(), {
        target: 'preview',
        branch: 'feature',
        artifact_id: artifactId,
        runtime: JSON.stringify({ kind: 'static', spa: false }),
      });
      await deps.db.insertInto('deployments').values(row).execute();
      const host = `${row.host}.localhost`;
      const edges = [main.edgePort, otherPort];
      for (const port of edges) expect((await visit(port, host)).status).toBe(302);
      const theirs = await memberCookie(leaving.token, host);
      const ours = await memberCookie(owner.token, host);
      for (const port of edges)
        for (const cookie of [theirs, ours])
          expect(await (await visit(port, host, '/', { cookie })).text()).toBe('the team preview');

      await client.organizations.members.remove(owner.orgId, 'leaving2@example.com');
      expect((await visit(main.edgePort, host, '/', { cookie: theirs })).status).toBe(302);
      const refused = await waitFor(
        'the other edge to refuse the removed member’s cookie',
        async () => {
          const res = await visit(otherPort, host, '/', { cookie: theirs });
          return res.status === 302 ? res : null;
        },
        5000,
      );
      expect(new URL(refused.headers.get('location')!).pathname).toBe('/protection/sign-in');
      expect(await refused.text()).toBe('');
      for (const port of edges)
        expect(await (await visit(port, host, '/', { cookie: ours })).text()).toBe('the team preview');
    });
  },
);

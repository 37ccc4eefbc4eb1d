/**
 * The server side of the API benchmark, in its own process so the load generator does not share
 * its event loop: the Slipway API and a bare Fastify route answering the same JSON.
 * Prints one JSON line with what the load generator needs, then serves until killed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { buildApp } from '../server/app.ts';
import { loadConfig } from '../server/platform/config.ts';
import { createDeps } from '../server/runtime.ts';
import { createToken } from '../server/features/identity/users/create-token.ts';
import { findOrCreateUser } from '../server/features/identity/users/find-or-create-user.ts';

const dataDir = process.env.BENCH_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'slipway-bench-'));
const deps = await createDeps(
  loadConfig({
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    SLIPWAY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000',
  }),
  { log: pino({ level: 'silent' }) },
);
const app = buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

const user = await findOrCreateUser(deps, 'bench@example.com');
const { token } = await createToken(deps, user.id, 'bench');
const org = await deps.db
  .selectFrom('organizations')
  .select('id')
  .where('personal_user_id', '=', user.id)
  .executeTakeFirstOrThrow();
// Enterprise, with a limit the bench cannot reach: we measure the work, not the 429s.
await deps.db.updateTable('organizations').set({ plan: 'enterprise' }).where('id', '=', org.id).execute();
const res = await fetch(`${base}/v1/projects`, {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    name: `bench-${Date.now()}`,
    repositoryUrl: 'https://example.com/r.git',
    organizationId: org.id,
  }),
});
const projectJson = await res.text();
const projectId = (JSON.parse(projectJson) as { data: { id: string } }).data.id;

// Members who read the same project, each with a token of their own (the `scale` bench's
// many-users rows): one user's requests share one rate-limit row, many users' do not.
const memberTokens: string[] = [];
for (let i = 0; i < Number(process.env.BENCH_MEMBERS ?? 0); i++) {
  const email = `member-${i}@example.com`;
  const member = await findOrCreateUser(deps, email);
  await fetch(`${base}/v1/organizations/${org.id}/members/invite`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, role: 'viewer' }),
  });
  memberTokens.push((await createToken(deps, member.id, 'bench')).token);
}

const bare = Fastify();
const same = JSON.parse(projectJson) as unknown;
bare.get('/bare', async () => same);
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/bare`;

const hasDeployments = app.hasRoute({ method: 'POST', url: '/v1/projects/:projectId/deployments' });
process.stdout.write(
  JSON.stringify({ base, bareUrl, token, memberTokens, projectId, hasDeployments }) + '\n',
);
process.on('SIGINT', () => process.exit(0));

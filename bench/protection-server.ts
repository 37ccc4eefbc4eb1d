/**
 * The server side of the protection benchmark, in its own process: the whole service on
 * 127.0.0.1 and two live previews serving the same 10 KiB file, one of a project under
 * `protection: none`, one of a project under `previews`, and a member's valid protection cookie
 * for the protected one (as the edge sets it after a sign-in). Prints one JSON line, then serves
 * until killed.
 */
import {
  signGrant,
  SIGN_IN_COOKIE_MS,
  PROTECTION_COOKIE,
} from '../server/features/serving/protection/protection-cookie.ts';
import { deploymentRow, storeSite } from '../test/helpers/edge.ts';
import { startStack } from '../test/helpers/stack.ts';

const stack = await startStack({
  env: { SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000', SLIPWAY_DEFAULT_PROTECTION: 'previews' },
});
const { token, orgId, userId } = await stack.user('bench@example.com');
const api = stack.client(token);
const deps = stack.running.deps;
const artifactId = await storeSite(deps.config.artifactsDir, {
  'index.html': '<h1>bench</h1>\n',
  'file-10k.txt': 'x'.repeat(10 * 1024),
});
const hosts: Record<string, string> = {};
for (const [name, protection] of [
  ['open', 'none'],
  ['guarded', 'previews'],
] as const) {
  const project = await api.projects.create({ name, organizationId: orgId });
  await api.projects.update(project.id, { protection });
  const row = deploymentRow(project.id, new Date().toISOString(), {
    target: 'preview',
    branch: 'feature',
    artifact_id: artifactId,
    runtime: JSON.stringify({ kind: 'static', spa: false }),
  });
  await deps.db.insertInto('deployments').values(row).execute();
  hosts[name] = `${row.host}.localhost`;
  if (name === 'guarded') {
    const value = await signGrant(deps.protectionKey, {
      projectId: project.id,
      host: hosts[name],
      expiresAt: Date.now() + SIGN_IN_COOKIE_MS,
      user: userId,
    });
    hosts.cookie = `${PROTECTION_COOKIE}=${value}`;
  }
}
process.stdout.write(
  JSON.stringify({ edgeUrl: stack.edgeUrl, open: hosts.open, guarded: hosts.guarded, cookie: hosts.cookie }) +
    '\n',
);
process.on('SIGINT', () => void stack.stop().then(() => process.exit(0)));
process.on('SIGTERM', () => void stack.stop().then(() => process.exit(0)));

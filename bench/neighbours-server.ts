/**
 * The server side of `npm run bench neighbours`, in its own process: the whole service with five
 * build slots, a healthy organization (enterprise) with a small real build, and four hostile
 * organizations (free plan) whose builds attack for HOSTILE_SECONDS: a process flood, a memory
 * hog, a disk writer and a log flood. Prints one JSON line, then serves until killed.
 */
import { createGitRepo } from '../test/helpers/git-repo.ts';
import { startStack } from '../test/helpers/stack.ts';

const seconds = Number(process.env.HOSTILE_SECONDS ?? 150);
const allow = process.env.SLIPWAY_SANDBOX_ALLOW;
const stack = await startStack({
  env: {
    SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000',
    SLIPWAY_BUILD_CONCURRENCY: '5',
    SLIPWAY_BUILD_TIMEOUT: `${seconds + 60}s`,
    SLIPWAY_SANDBOX_DISK: '512MiB',
    ...(allow ? { SLIPWAY_SANDBOX_ALLOW: allow } : {}),
  },
});

const pkg = JSON.stringify({ name: 'app', private: true, scripts: { build: 'sh build.sh' } });
const healthyRepo = createGitRepo({
  files: {
    'package.json': pkg,
    'build.sh': 'mkdir -p dist && echo "<h1>healthy</h1>" > dist/index.html && echo built\n',
  },
});
/** Each attack runs for `seconds`, then the build succeeds with a page. */
const done = `mkdir -p dist && echo '<h1>done</h1>' > dist/index.html\n`;
const attacks: Record<string, string> = {
  // Forks as fast as it can, up to the sandbox's process limit and on against it.
  processes: `end=$(( $(date +%s) + ${seconds} )); while [ $(date +%s) -lt $end ]; do (sleep 5 &) 2>/dev/null; done\n${done}`,
  // 3 GiB of shared memory, again and again (the group's limit stops each).
  memory: `end=$(( $(date +%s) + ${seconds} )); while [ $(date +%s) -lt $end ]; do python3 -c "import mmap; m = mmap.mmap(-1, 3 << 30, mmap.MAP_SHARED); [m.write(b'x' * (1 << 20)) for _ in range(3 << 10)]" 2>/dev/null; done\n${done}`,
  // Writes 400 MiB, deletes it, writes again: the disk busy, never over the 512 MiB limit.
  disk: `end=$(( $(date +%s) + ${seconds} )); while [ $(date +%s) -lt $end ]; do dd if=/dev/zero of=big bs=1M count=400 2>/dev/null; rm -f big; done\n${done}`,
  // As much log as it can print.
  logs: `timeout ${seconds} yes "flood flood flood flood flood flood flood flood flood flood flood flood flood" || true\n${done}`,
};

const healthy = await stack.user('healthy@example.com');
const healthyApi = stack.client(healthy.token);
const healthyProject = await healthyApi.projects.create({
  name: 'healthy',
  repositoryUrl: healthyRepo.url,
  organizationId: healthy.orgId,
});
const first = await healthyApi.deployments.create(healthyProject.id);
for (;;) {
  const cur = await healthyApi.deployments.get(first.id);
  if (cur.status === 'live') break;
  if (cur.status === 'failed') throw new Error(`healthy deployment failed: ${cur.errorMessage}`);
  await new Promise((r) => setTimeout(r, 50));
}
const live = await healthyApi.deployments.get(first.id);

const hostile: { token: string; projectId: string; attack: string }[] = [];
// HOSTILE_ATTACKS=memory,logs runs only those (to see which one costs the healthy tenant most).
const chosen = process.env.HOSTILE_ATTACKS?.split(',') ?? Object.keys(attacks);
for (const [attack, script] of Object.entries(attacks).filter(([name]) => chosen.includes(name))) {
  const user = await stack.user(`hostile-${attack}@example.com`);
  await stack.running.deps.db
    .updateTable('organizations')
    .set({ plan: 'free' })
    .where('id', '=', user.orgId)
    .execute();
  const repo = createGitRepo({ files: { 'package.json': pkg, 'build.sh': script } });
  const project = await stack
    .client(user.token)
    .projects.create({ name: `hostile-${attack}`, repositoryUrl: repo.url, organizationId: user.orgId });
  hostile.push({ token: user.token, projectId: project.id, attack });
}

process.stdout.write(
  JSON.stringify({
    apiUrl: stack.apiUrl,
    edgeUrl: stack.edgeUrl,
    healthy: { token: healthy.token, projectId: healthyProject.id, host: new URL(live.url).host },
    hostile,
  }) + '\n',
);
process.on('SIGINT', () => void stack.stop().then(() => process.exit(0)));
process.on('SIGTERM', () => void stack.stop().then(() => process.exit(0)));

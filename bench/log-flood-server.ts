/**
 * The server side of the log flood benchmark, in its own process: the whole service (API, worker,
 * edge) on 127.0.0.1 with SQLite, one quiet project deployed once, and projects whose builds
 * print LOG_FLOOD_MB (default 150) MiB of log in lines of LOG_FLOOD_LINES bytes (default 100
 * and 8), then an error line, and fail. Prints one JSON
 * line, then serves until killed.
 */
import { createGitRepo } from '../test/helpers/git-repo.ts';
import { deploymentDone, startStack } from '../test/helpers/stack.ts';

const floodMiB = Number(process.env.LOG_FLOOD_MB ?? 150);
/** Bytes per printed line, newline included (1 prints empty lines): one flood project each. */
const lineSizes = (process.env.LOG_FLOOD_LINES ?? '100,8').split(',').map(Number);
const allow = process.env.SLIPWAY_SANDBOX_ALLOW;
const stack = await startStack({
  env: {
    SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000000',
    ...(process.env.SLIPWAY_BUILD_LOG_LIMIT
      ? { SLIPWAY_BUILD_LOG_LIMIT: process.env.SLIPWAY_BUILD_LOG_LIMIT }
      : {}),
    ...(allow ? { SLIPWAY_SANDBOX_ALLOW: allow } : {}),
  },
});
const { token, orgId } = await stack.user('bench@example.com');
const api = stack.client(token);

const quietRepo = createGitRepo({ files: { 'index.html': '<h1>quiet</h1>\n' } });
const quiet = await api.projects.create({
  name: 'quiet',
  repositoryUrl: quietRepo.url,
  organizationId: orgId,
});
const quietDeployment = await deploymentDone(api, (await api.deployments.create(quiet.id)).id);
if (quietDeployment.status !== 'live')
  throw new Error(`quiet deployment failed: ${quietDeployment.errorMessage}`);

// One 1 MiB block of numbered lines, written again and again with back-pressure, so the build's
// own CPU stays small beside what it makes the service do.
const floodScript = (lineBytes: number) => `
const line = (i) => ('flood line ' + String(i).padStart(6, '0') + ' ' + 'x'.repeat(${lineBytes})).slice(0, ${lineBytes - 1}) + '\\n';
const block = Array.from({ length: Math.ceil(1048576 / ${lineBytes}) }, (_, i) => line(i)).join('');
let left = ${floodMiB};
const more = () => {
  while (left > 0) {
    left--;
    if (!process.stdout.write(block)) return process.stdout.once('drain', more);
  }
  process.stdout.write('flood done\\n', () => {
    process.stderr.write('ERROR: the build failed after its flood\\n');
    process.exitCode = 1;
  });
};
more();
`;
const repos = [quietRepo];
const floods: { lineBytes: number; projectId: string }[] = [];
for (const lineBytes of lineSizes) {
  const repo = createGitRepo({
    files: {
      'package.json': JSON.stringify({ name: 'flood', private: true, scripts: { build: 'node flood.mjs' } }),
      'flood.mjs': floodScript(lineBytes),
    },
  });
  repos.push(repo);
  const project = await api.projects.create({
    name: `flood-${lineBytes}`,
    repositoryUrl: repo.url,
    organizationId: orgId,
  });
  floods.push({ lineBytes, projectId: project.id });
}

process.stdout.write(
  JSON.stringify({
    apiUrl: stack.apiUrl,
    token,
    quietDeploymentId: quietDeployment.id,
    floods,
    floodMiB,
  }) + '\n',
);
const stop = () =>
  void stack.stop().then(() => {
    for (const repo of repos) repo.remove();
    process.exit(0);
  });
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

import { benchAction } from './action.ts';
import { benchApi } from './api.ts';
import { benchBot } from './bot.ts';
import { benchBuildCache } from './build-cache.ts';
import { benchBuilds } from './builds.ts';
import { benchCliStart } from './cli-start.ts';
import { benchDashboard } from './dashboard.ts';
import { benchData } from './data.ts';
import { benchEdge } from './edge.ts';
import { benchEdgeApp } from './edge-app.ts';
import { benchEdgeFlood } from './edge-flood.ts';
import { benchEdgeHosts } from './edge-hosts.ts';
import { benchEdgeStream } from './edge-stream.ts';
import { benchLogFlood } from './log-flood.ts';
import { benchMetrics } from './metrics.ts';
import { benchNeighbours } from './neighbours.ts';
import { benchObjectStorage } from './object-storage.ts';
import { benchOpsMetrics } from './ops-metrics.ts';
import { benchProtection } from './protection.ts';
import { benchNextRebuild, benchNextSsr } from './next.ts';
import { benchRecording } from './monitoring.ts';
import { benchMonitoringTick } from './monitoring-tick.ts';
import { benchSandbox } from './sandbox.ts';
import { benchScale } from './scale.ts';
import { benchUpload } from './upload.ts';
import { benchWebhooks } from './webhooks.ts';

/** `npm run bench`: every benchmark in one run, each beside its baseline measured in the same run. */
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const only = process.argv.slice(2);
const suites: Record<string, () => Promise<string>> = {
  api: () => benchApi(seconds),
  builds: () => benchBuilds(),
  edge: () => benchEdge(seconds),
  'edge-app': () => benchEdgeApp(seconds),
  'edge-flood': () => benchEdgeFlood(),
  'edge-hosts': () => benchEdgeHosts(seconds),
  'edge-stream': () => benchEdgeStream(),
  'log-flood': () => benchLogFlood(seconds),
  webhooks: () => benchWebhooks(),
  action: () => benchAction(),
  bot: () => benchBot(),
  recording: () => benchRecording(),
  metrics: () => benchMetrics(seconds),
  monitoring: () => benchMonitoringTick(),
  scale: () => benchScale(seconds),
  sandbox: () => benchSandbox(),
  upload: () => benchUpload(),
  'build-cache': () => benchBuildCache(),
  dashboard: () => benchDashboard(),
  data: () => benchData(),
  'next-ssr': () => benchNextSsr(seconds),
  'next-rebuild': () => benchNextRebuild(),
  'cli-start': () => benchCliStart(),
  neighbours: () => benchNeighbours(seconds),
  'object-storage': () => benchObjectStorage(),
  'ops-metrics': () => benchOpsMetrics(seconds),
  protection: () => benchProtection(seconds),
};

const unknown = only.filter((name) => !(name in suites));
if (unknown.length) {
  process.stderr.write(
    `npm run bench: no benchmark named ${unknown.map((n) => `"${n}"`).join(', ')}; the names: ${Object.keys(suites).join(', ')}\n`,
  );
  process.exit(2);
}

for (const [name, run] of Object.entries(suites)) {
  if (only.length && !only.includes(name)) continue;
  process.stdout.write(`\n== ${name} ==\n${await run()}\n`);
}

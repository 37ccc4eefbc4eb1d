import { Gauge } from 'prom-client';
import type { OpsMetrics } from './ops-metrics.ts';

/** Server apps this edge process runs, by state, read at each scrape. */
export function registerServerApps(ops: OpsMetrics, supervisor: { counts(): Record<string, number> }): void {
  const apps = new Gauge({
    name: 'slipway_server_apps',
    help: 'Server apps (Node.js deployments) this edge process runs, by state (starting, running, restarting).',
    labelNames: ['state'],
    registers: [ops.registry],
  });
  ops.onScrape('server_apps', () => {
    for (const [state, n] of Object.entries(supervisor.counts())) apps.set({ state }, n);
  });
}

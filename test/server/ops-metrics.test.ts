import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../server/platform/config.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { histogramCount, sample, scrape, type Families } from '../helpers/prometheus.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const TOKEN = 'operator-metrics-token-0123456789';

/**
 * The operator's Prometheus metrics of a real stack (API, worker and edge in one process, its
 * metrics listener on a port of its own): real builds and real edge requests move them by
 * exactly what happened.
 */
describe('operator metrics', () => {
  let stack: Stack;
  let repo: GitRepo;
  let metricsUrl: string;
  let tenant: { token: string; orgId: string };

  beforeAll(async () => {
    stack = await startStack({
      env: {
        SLIPWAY_METRICS_PORT: '0',
        SLIPWAY_METRICS_TOKEN: TOKEN,
        // The failing build below fills its /tmp.
        SLIPWAY_SANDBOX_TMP_SIZE: '16MiB',
      },
    });
    metricsUrl = stack.running.metricsUrl!;
    repo = createGitRepo({ files: { 'index.html': '<h1>metrics</h1>\n', 'a.txt': 'a\n' } });
    tenant = await stack.user();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    repo?.remove();
  });

  const scrapeNow = () => scrape(metricsUrl, TOKEN);

  it('a live build, a build stopped by its /tmp limit and edge requests move the counts by what happened', async () => {
    const api = stack.client(tenant.token);
    const before = await scrapeNow();
    const project = await api.projects.create({
      name: 'metrics-site',
      repositoryUrl: repo.url,
      organizationId: tenant.orgId,
    });
    // A receiver that is not there: the deliveries stay pending (retried later).
    await api.webhooks.create(project.id, {
      url: 'http://127.0.0.1:9/hooks',
      events: ['deployment.success'],
      secret: 'a-webhook-secret-of-16+',
    });
    const live = await deploymentDone(api, (await api.deployments.create(project.id)).id);
    expect(live.status).toBe('live');

    for (let i = 0; i < 5; i++) expect((await stack.fetchFromEdge(`${live.url}/a.txt`)).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await stack.fetchFromEdge(`${live.url}/missing.txt`)).status).toBe(404);

    const filler = await api.projects.create({
      name: 'metrics-fills-tmp',
      repositoryUrl: repo.url,
      organizationId: tenant.orgId,
      buildCommand: 'head -c 33554432 /dev/zero > /tmp/fill',
    });
    const failed = await deploymentDone(api, (await api.deployments.create(filler.id)).id);
    expect(failed.status).toBe('failed');
    expect(failed.errorMessage).toMatch(/SLIPWAY_SANDBOX_TMP_SIZE/);

    // Edge requests are recorded once written out: wait for the last of them.
    const after = await waitFor('the edge requests to be counted', async () => {
      const f = await scrapeNow();
      return (sample(f, 'slipway_edge_requests_total', { class: '4xx' }) ?? 0) -
        (sample(before, 'slipway_edge_requests_total', { class: '4xx' }) ?? 0) >=
        3
        ? f
        : null;
    });
    const moved = (name: string, labels: Record<string, string>) =>
      (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    const observed = (name: string, labels: Record<string, string>) =>
      histogramCount(after, name, labels) - histogramCount(before, name, labels);

    expect(moved('slipway_builds_total', { outcome: 'live' })).toBe(1);
    expect(moved('slipway_builds_total', { outcome: 'failed' })).toBe(1);
    expect(observed('slipway_build_duration_seconds', { outcome: 'live' })).toBe(1);
    expect(observed('slipway_build_duration_seconds', { outcome: 'failed' })).toBe(1);
    expect(moved('slipway_sandbox_limit_hits_total', { limit: 'tmp', where: 'build' })).toBe(1);
    expect(moved('slipway_edge_requests_total', { class: '2xx' })).toBe(5);
    expect(moved('slipway_edge_requests_total', { class: '4xx' })).toBe(3);
    expect(observed('slipway_edge_request_duration_seconds', { class: '2xx' })).toBe(5);
    expect(observed('slipway_edge_request_duration_seconds', { class: '4xx' })).toBe(3);
    // The worker's health request through the edge is the service's own: not counted.
    expect(moved('slipway_edge_requests_total', { class: '5xx' })).toBe(0);

    // Read when scraped: the delivery to nowhere waits for its retry; nothing else waits.
    expect(sample(after, 'slipway_webhook_deliveries_pending')).toBe(1);
    expect(sample(after, 'slipway_webhook_deliveries_oldest_pending_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'slipway_jobs_queued', { kind: 'deployment.build' }) ?? 0).toBe(0);
    expect(sample(after, 'slipway_github_events_pending')).toBe(0);
    expect(sample(after, 'slipway_server_apps', { state: 'running' })).toBe(0);
    expect(sample(after, 'slipway_info', { roles: 'api,worker,edge' })).toBe(1);
    expect(sample(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    if (process.env.SLIPWAY_TEST_DIALECT === 'postgres') {
      const pool = (state: string) => sample(after, 'slipway_db_pool_connections', { state })!;
      expect(pool('max')).toBe(stack.running.deps.config.dbPoolSize);
      expect(pool('in_use') + pool('idle')).toBeGreaterThan(0);
      expect(pool('in_use') + pool('idle')).toBeLessThanOrEqual(pool('max'));
    } else {
      expect(after.find((f) => f.name === 'slipway_db_pool_connections')).toBeUndefined();
    }
  }, 120_000);

  it('every metric the Grafana dashboard and the Prometheus rules in deploy/ name is one this stack serves', async () => {
    const deploy = resolve(import.meta.dirname, '../../deploy');
    const dashboard = JSON.parse(readFileSync(`${deploy}/grafana/slipway-dashboard.json`, 'utf8')) as {
      panels: { type: string; targets?: { expr: string; datasource: { uid: string } }[] }[];
    };
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThan(10);
    const exprs = graphs.flatMap((p) =>
      p.targets!.map((t) => (expect(t.datasource.uid).toBe('${DS_PROMETHEUS}'), t.expr)),
    );
    const rules = parseYaml(readFileSync(`${deploy}/prometheus/slipway.yml`, 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    exprs.push(...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)));
    const named = new Set(
      exprs.flatMap((e) => [...e.matchAll(/\b((?:slipway|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!)),
    );
    const served = new Set((await scrapeNow()).flatMap((f) => [f.name, ...f.samples.map((x) => x.name)]));
    // The pool is PostgreSQL's: SQLite has none.
    if (process.env.SLIPWAY_TEST_DIALECT !== 'postgres') served.add('slipway_db_pool_connections');
    expect([...named].filter((n) => !served.has(n))).toEqual([]);
    expect(named.size).toBeGreaterThan(15);
  });

  it('the listener wants the operator token: none, a tenant API token or a wrong one get 401', async () => {
    for (const authorization of [undefined, `Bearer ${tenant.token}`, `Bearer ${TOKEN}x`, TOKEN]) {
      const res = await fetch(metricsUrl, authorization ? { headers: { authorization } } : {});
      expect(res.status).toBe(401);
      expect(await res.text()).not.toMatch(/slipway_/);
    }
    const other = await fetch(metricsUrl.replace('/metrics', '/v1/user'), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(other.status).toBe(404);
  });

  it('the API serves the same metrics at /metrics with the operator token, and to nobody else', async () => {
    const families: Families = await scrape(`${stack.apiUrl}/metrics`, TOKEN);
    expect(sample(families, 'slipway_info', { roles: 'api,worker,edge' })).toBe(1);
    for (const token of [tenant.token, 'not-the-token-at-all-000']) {
      const res = await fetch(`${stack.apiUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      expect(await res.text()).not.toMatch(/slipway_/);
    }
  });
});

describe('operator metrics, off', () => {
  it('without SLIPWAY_METRICS_PORT or _TOKEN there is no listener and the API has no /metrics', async () => {
    const stack = await startStack();
    try {
      expect(stack.running.metricsUrl).toBeUndefined();
      const { token } = await stack.user();
      const res = await fetch(`${stack.apiUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(404);
    } finally {
      await stack.stop();
    }
  });
});

describe('operator metrics settings', () => {
  it('a short token or a bad port is refused, naming the variable', () => {
    expect(() => loadConfig({ SLIPWAY_METRICS_TOKEN: 'short' })).toThrow(
      /SLIPWAY_METRICS_TOKEN must be at least 16 printable characters/,
    );
    expect(() => loadConfig({ SLIPWAY_METRICS_PORT: 'nine' })).toThrow(
      /SLIPWAY_METRICS_PORT must be a whole number from 0 to 65535/,
    );
    const config = loadConfig({ SLIPWAY_METRICS_PORT: '9464' });
    expect(config.metrics).toEqual({ port: 9464, host: '127.0.0.1', token: undefined, enabled: true });
    expect(loadConfig({}).metrics.enabled).toBe(false);
  });

  it('a metrics port in use stops the start, naming it and its variable', async () => {
    const first = await startStack({ env: { SLIPWAY_METRICS_PORT: '0' } });
    try {
      const port = new URL(first.running.metricsUrl!).port;
      await expect(startStack({ env: { SLIPWAY_METRICS_PORT: port } })).rejects.toThrow(
        `Port ${port} (the metrics listener) is already in use: stop what listens there, or set SLIPWAY_METRICS_PORT to another port`,
      );
    } finally {
      await first.stop();
    }
  });
});

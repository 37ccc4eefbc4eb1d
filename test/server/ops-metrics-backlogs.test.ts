import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBacklogs } from '../../server/roles/ops-backlogs.ts';
import { createOpsMetrics } from '../../server/platform/ops-metrics/ops-metrics.ts';
import { storeGitHubEvent } from '../../server/features/github/events/store-event.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { parseScrape, sample } from '../helpers/prometheus.ts';

/** Backlogs are read from the database when scraped, with the service's clock. */
describe('operator metrics: backlogs read when scraped', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-11-26T12:00:00.000Z');

  beforeAll(async () => {
    t = await createTestApp({ clock });
    registerBacklogs(t.deps.ops, t.deps);
  });
  afterAll(() => t.close());

  const scrapeNow = async () => parseScrape(await t.deps.ops.scrape());

  it('counts due jobs by kind with the oldest wait; jobs due later are not waiting yet', async () => {
    await t.deps.queue.enqueue(t.deps.db, 'test.backlog', {});
    clock.advance(30_000);
    await t.deps.queue.enqueue(t.deps.db, 'test.backlog', {});
    await t.deps.queue.enqueue(
      t.deps.db,
      'test.later',
      {},
      { runAt: new Date(clock.now().getTime() + 60_000) },
    );
    clock.advance(60_000);

    const f = await scrapeNow();
    expect(sample(f, 'slipway_jobs_queued', { kind: 'test.backlog' })).toBe(2);
    expect(sample(f, 'slipway_jobs_oldest_queued_seconds', { kind: 'test.backlog' })).toBe(90);
    // Due exactly now: waiting, for no time yet.
    expect(sample(f, 'slipway_jobs_queued', { kind: 'test.later' })).toBe(1);
    expect(sample(f, 'slipway_jobs_oldest_queued_seconds', { kind: 'test.later' })).toBe(0);

    const job = await t.deps.queue.claim(['test.backlog'], 'worker-1', 60_000);
    expect(job).not.toBeNull();
    clock.advance(5_000);
    const g = await scrapeNow();
    expect(sample(g, 'slipway_jobs_queued', { kind: 'test.backlog' })).toBe(1);
    expect(sample(g, 'slipway_jobs_oldest_queued_seconds', { kind: 'test.backlog' })).toBe(65);
    expect(sample(g, 'slipway_jobs_running', { kind: 'test.backlog' })).toBe(1);
  });

  it("counts the GitHub App's events not yet handled, with the oldest one's age", async () => {
    const app = await t.user('app@example.com', { githubApp: true });
    const actor = { userId: app.userId, email: app.email, tokenId: 'tok', githubApp: true as const };
    const body = { deliveryId: 'd-1', name: 'push', body: '{}', signature: 'sha256=00', orderingKey: 'r' };
    await storeGitHubEvent(t.deps, actor, body);
    clock.advance(12_000);
    await storeGitHubEvent(t.deps, actor, { ...body, deliveryId: 'd-2', body: '{"a":1}' });
    const f = await scrapeNow();
    expect(sample(f, 'slipway_github_events_pending')).toBe(2);
    expect(sample(f, 'slipway_github_events_oldest_pending_seconds')).toBe(12);
  });

  it('a read that fails (database closed) leaves its gauges empty and is counted; the scrape still answers', async () => {
    const other = await createTestApp();
    const ops = createOpsMetrics();
    ops.edgeRequest(200, 3);
    registerBacklogs(ops, other.deps);
    await other.close();
    const f = parseScrape(await ops.scrape());
    expect(sample(f, 'slipway_edge_requests_total', { class: '2xx' })).toBe(1);
    expect(sample(f, 'slipway_jobs_queued')).toBeUndefined();
    expect(sample(f, 'slipway_metrics_read_errors_total', { read: 'jobs' })).toBe(1);
    expect(sample(f, 'slipway_metrics_read_errors_total', { read: 'webhook_deliveries' })).toBe(1);
  });

  it('edge statuses count by class, odd ones as other; histograms observe seconds', async () => {
    const ops = createOpsMetrics();
    for (const [status, ms] of [
      [200, 1],
      [204, 2],
      [301, 3],
      [404, 4],
      [503, 2000],
      [999, 5],
    ] as const)
      ops.edgeRequest(status, ms);
    const f = parseScrape(await ops.scrape());
    expect(sample(f, 'slipway_edge_requests_total', { class: '2xx' })).toBe(2);
    expect(sample(f, 'slipway_edge_requests_total', { class: '5xx' })).toBe(1);
    expect(sample(f, 'slipway_edge_requests_total', { class: 'other' })).toBe(1);
    expect(sample(f, 'slipway_edge_request_duration_seconds_sum', { class: '5xx' })).toBe(2);
    expect(sample(f, 'slipway_edge_request_duration_seconds_bucket', { class: '2xx', le: '0.001' })).toBe(1);
    expect(sample(f, 'slipway_edge_request_duration_seconds_bucket', { class: '2xx', le: '0.0025' })).toBe(2);
  });
});

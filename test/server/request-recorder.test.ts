import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATENCY_COLUMNS } from '../../server/core/histogram.ts';
import { createRequestRecorder } from '../../server/features/monitoring/request-recorder.ts';
import { writeRollupDeltas, type RollupDelta } from '../../server/features/monitoring/record-requests.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { insertProject } from '../helpers/edge.ts';

describe('request recorder', () => {
  let t: TestApp;
  let clock: ManualClock;
  let projectId: string;

  beforeAll(async () => {
    clock = new ManualClock('2026-11-22T10:00:30.000Z');
    t = await createTestApp({ clock });
    const alice = await t.user('alice@example.com');
    projectId = (await insertProject(t, alice.orgId, { name: 'counted' })).id;
  });
  afterAll(() => t.close());

  /** The per-minute rows, with their error statuses and latency histogram. */
  const rollups = async () => {
    const rows = await t.deps.db
      .selectFrom('traffic_rollups')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('span', '=', 'minute')
      .orderBy('bucket_start')
      .execute();
    const statuses = await t.deps.db
      .selectFrom('traffic_status_counts')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('span', '=', 'minute')
      .execute();
    return rows.map((r) => ({
      ...r,
      minute: r.bucket_start,
      statusCounts: Object.fromEntries(
        statuses
          .filter((s) => s.bucket_start === r.bucket_start)
          .map((s) => [String(s.status), Number(s.count)]),
      ),
      latencyHist: LATENCY_COLUMNS.map((c) => Number(r[c])),
    }));
  };

  it('counts requests per project and minute in memory and writes the sums on flush', async () => {
    const recorder = createRequestRecorder(t.deps, { intervalMs: 60_000 });
    const serve = (status: number, durationMs: number, bytes: number) =>
      recorder.record({ projectId, status, durationMs, bytes });
    serve(200, 3, 100);
    serve(200, 7.6, 100);
    serve(404, 1, 50);
    recorder.record({ projectId: null, status: 404, durationMs: 1, bytes: 50 });
    clock.advance(60_000);
    serve(500, 2, 10);
    expect(await rollups()).toEqual([]);

    await recorder.close();
    const rows = await rollups();
    expect(
      rows.map((r) => [
        r.minute,
        ...[r.requests, r.success, r.errors, r.bytes, r.latency_sum_ms].map(Number),
      ]),
    ).toEqual([
      ['2026-11-22T10:00:00.000Z', 3, 2, 1, 250, 12],
      ['2026-11-22T10:01:00.000Z', 1, 0, 1, 10, 2],
    ]);
    expect(rows[0]!.statusCounts).toEqual({ '404': 1 });
    expect(rows[0]!.latencyHist.reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('keeps the counts of a failed write and adds them on the next flush', async () => {
    clock.set('2026-11-22T11:00:05.000Z');
    let failNext = true;
    const written: RollupDelta[][] = [];
    const recorder = createRequestRecorder(t.deps, {
      intervalMs: 60_000,
      write: async (deltas) => {
        if (failNext) {
          failNext = false;
          throw new Error('database unreachable');
        }
        written.push(deltas);
        await writeRollupDeltas(t.deps, deltas);
      },
    });
    recorder.record({ projectId, status: 200, durationMs: 1, bytes: 1 });
    recorder.record({ projectId, status: 200, durationMs: 1, bytes: 1 });
    await recorder.flush();
    expect(written).toEqual([]);
    recorder.record({ projectId, status: 503, durationMs: 1, bytes: 1 });
    await recorder.close();
    expect(written).toHaveLength(1);
    const row = (await rollups()).find((r) => r.minute === '2026-11-22T11:00:00.000Z');
    expect([row?.requests, row?.success, row?.errors, row?.bytes].map(Number)).toEqual([3, 2, 1, 3]);
    expect(row!.statusCounts).toEqual({ '503': 1 });
  });
});

import { acceptDelivery } from '../../bot/service/accept-delivery.ts';
import { sign as signPayload } from '../../api/signature.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign, signStandard } from '../../api/signature.ts';
import { createWebhookRegistrar } from '../../bot/service/ensure-webhook.ts';
import { type Harness, SERVICE_SECRET, startHarness } from './helpers/harness.ts';

describe('the receiver of the service webhooks', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    expect(h?.github.violations()).toEqual([]);
    await h?.stop();
  });

  const body = (event: string, data: Record<string, unknown>, at = new Date()) =>
    JSON.stringify({ event, timestamp: at.toISOString(), data });

  async function post(raw: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${h.botUrl}/slipway/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-slipway-event': /"event":"([^"]+)"/.exec(raw)?.[1] ?? 'deployment.success',
        'x-slipway-delivery': `whd_${randomUUID().replaceAll('-', '')}`,
        'x-slipway-signature': sign(SERVICE_SECRET, raw),
        ...headers,
      },
      body: raw,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** GitHub calls made while `fn` runs and the work it started finishes. */
  async function callsDuring(fn: () => Promise<unknown>) {
    const before = h.github.calls.length;
    await fn();
    await h.bot.idle();
    return h.github.calls.slice(before).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{40}/, '<sha>')}`);
  }

  it('answers 401 to a missing or wrong signature and acts on nothing', async () => {
    const raw = body('deployment.success', { deploymentId: 'dpl_0123456789abcdef01' });
    const calls = await callsDuring(async () => {
      expect(await post(raw, { 'x-slipway-signature': sign('another-secret-0123456789', raw) })).toEqual({
        status: 401,
        body: { error: 'X-Slipway-Signature is missing or does not match the body' },
      });
      expect((await post(raw, { 'x-slipway-signature': '' })).status).toBe(401);
      // The signature covers the exact bytes: the same JSON spaced differently fails.
      expect(
        (await post(raw.replace(':', ': '), { 'x-slipway-signature': sign(SERVICE_SECRET, raw) })).status,
      ).toBe(401);
    });
    expect(calls).toEqual([]);
  });

  it('answers 400 to malformed deliveries', async () => {
    const notJson = '{"event": "deployment.success",';
    expect(await post(notJson, { 'x-slipway-event': 'deployment.success' })).toEqual({
      status: 400,
      body: { error: 'the body is not JSON' },
    });
    const wrongShape = JSON.stringify({
      event: 'deployment.exploded',
      timestamp: new Date().toISOString(),
      data: {},
    });
    const res = await post(wrongShape);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^the body is not a Slipway delivery \(event: /);
    expect((await post(body('deployment.success', {}), { 'x-slipway-delivery': '' })).status).toBe(400);
    const get = await fetch(`${h.botUrl}/slipway/webhooks`);
    expect(get.status).toBe(405);
  });

  it('refuses timestamps more than 5 minutes away', async () => {
    const data = { deploymentId: 'dpl_0123456789abcdef01' };
    for (const offset of [-6 * 60_000, 6 * 60_000]) {
      expect(await post(body('deployment.success', data, new Date(Date.now() + offset)))).toEqual({
        status: 400,
        body: {
          error: 'timestamp is more than 5 minutes away from now: refusing a stale or replayed delivery',
        },
      });
    }
  });

  it('checks Standard Webhooks headers when present: a bad signature or a stale webhook-timestamp is refused', async () => {
    const raw = body('deployment.success', { deploymentId: 'dpl_0123456789abcdef02' });
    const id = `whd_${randomUUID().replaceAll('-', '')}`;
    const calls = await callsDuring(async () => {
      // X-Slipway-Signature and the body's timestamp are right: only the new headers are wrong.
      expect(
        await post(raw, {
          'x-slipway-delivery': id,
          ...signStandard('another-secret-0123456789', id, new Date(), raw),
        }),
      ).toEqual({ status: 401, body: { error: 'webhook-signature does not match the body' } });
      // An attempt captured six minutes ago, replayed now.
      const captured = signStandard(SERVICE_SECRET, id, new Date(Date.now() - 6 * 60_000), raw);
      expect(await post(raw, { 'x-slipway-delivery': id, ...captured })).toEqual({
        status: 400,
        body: {
          error:
            'webhook-timestamp is more than 5 minutes away from now: refusing a stale or replayed delivery',
        },
      });
      const other = signStandard(SERVICE_SECRET, `${id}x`, new Date(), raw);
      expect((await post(raw, { 'x-slipway-delivery': id, ...other })).status).toBe(400);
    });
    expect(calls).toEqual([]);
    // Right and fresh, and without X-Slipway-Signature at all: accepted; webhook-id is the delivery id.
    const fresh = {
      'x-slipway-signature': '',
      'x-slipway-delivery': '',
      ...signStandard(SERVICE_SECRET, id, new Date(), raw),
    };
    expect(await post(raw, fresh)).toEqual({ status: 202, body: { ok: true } });
    expect(await post(raw, fresh)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    await h.bot.idle();
  });

  it('acknowledges at once, works afterwards, and ignores a replayed delivery id', async () => {
    const gate = h.gate();
    const sha = h.push('feature-50', { 'message.txt': 'fifty', 'gate.txt': gate.path });
    await h.open({ number: 50, headSha: sha, headRef: 'feature-50' });
    const [run] = h.github.checks(sha, 'Slipway Preview');
    const deploymentId = run!.external_id!;
    await h.waitForCheck(sha, 'Slipway Preview', (r) => r.output?.title === 'Building the preview');
    await h.bot.idle();

    const raw = body('deployment.building', { deploymentId, status: 'building' });
    const id = 'whd_replayed0123456789abcd';
    const first = await callsDuring(async () => {
      const started = Date.now();
      expect(await post(raw, { 'x-slipway-delivery': id })).toEqual({ status: 202, body: { ok: true } });
      expect(Date.now() - started).toBeLessThan(1000);
    });
    // It read the state again and found nothing to change: no write.
    expect(first.filter((c) => !c.startsWith('GET'))).toEqual([]);
    expect(first.length).toBeGreaterThan(0);
    const again = await callsDuring(async () => {
      expect(await post(raw, { 'x-slipway-delivery': id })).toEqual({
        status: 200,
        body: { ok: true, duplicate: true },
      });
    });
    expect(again).toEqual([]);
    gate.release();
    await h.waitForCheck(sha, 'Slipway Preview', (r) => r.conclusion === 'success');
  });

  it('re-reads the deployment, so events out of order never move a check backwards', async () => {
    const gate = h.gate();
    const sha = h.push('feature-51', { 'message.txt': 'fifty-one', 'gate.txt': gate.path });
    await h.open({ number: 51, headSha: sha, headRef: 'feature-51' });
    const [run] = h.github.checks(sha, 'Slipway Preview');
    const deploymentId = run!.external_id!;
    await h.waitForCheck(sha, 'Slipway Preview', (r) => r.output?.title === 'Building the preview');

    // A "success" that claims more than is true (arriving before "building", say) changes nothing.
    await callsDuring(() => post(body('deployment.success', { deploymentId, status: 'live' })));
    expect(run).toMatchObject({ status: 'in_progress', output: { title: 'Building the preview' } });

    gate.release();
    await h.waitForCheck(sha, 'Slipway Preview', (r) => r.conclusion === 'success');
    await h.delivered(deploymentId, 'deployment.success');
    // A late "created" and "building" after "success" leave the check successful.
    const late = await callsDuring(async () => {
      await post(body('deployment.created', { deploymentId, status: 'queued' }));
      await post(body('deployment.building', { deploymentId, status: 'building' }));
    });
    expect(late.filter((c) => !c.startsWith('GET'))).toEqual([]);
    expect(run).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      output: { title: 'Preview is live' },
    });
  });

  it('a failed preview fails the check with the log tail, the deployment status and the comment', async () => {
    const sha = h.push('feature-52', { 'message.txt': 'x', 'fail.txt': 'missing semicolon' });
    await h.open({ number: 52, headSha: sha, headRef: 'feature-52' });
    const run = await h.waitForCheck(sha, 'Slipway Preview', (r) => r.status === 'completed');
    expect(run.conclusion).toBe('failure');
    expect(run.output.title).toBe('Preview failed');
    expect(run.output.text).toContain('build broke: missing semicolon');
    expect(run.output.text).toMatch(/^Last lines of the build log:\n\n```text\n/);
    expect(run.actions.map((a: any) => a.identifier)).toEqual(['redeploy']);
    await h.delivered(run.external_id, 'deployment.failed');
    expect(h.github.deployments(52)[0]!.statuses.at(-1)).toMatchObject({
      state: 'failure',
      log_url: `https://github.com/Codertocat/Hello-World/runs/${run.id}`,
    });
    expect(h.github.sticky(52)).toContain('| **Status** | ❌ Failed: ');
  });

  it('ignores deployments the bot did not start', async () => {
    const d = await h.client.deployments.create(h.project.id, { message: 'by hand' });
    const calls = await callsDuring(async () => {
      expect((await post(body('deployment.created', { deploymentId: d.id }))).status).toBe(202);
    });
    expect(calls).toEqual([]);
  });

  it('registers the project webhook once, however many bot processes ask', async () => {
    const settings = { botUrl: 'http://bot.example.test', serviceWebhookSecret: SERVICE_SECRET };
    const a = createWebhookRegistrar(h.client, settings);
    await Promise.all([a.ensure(h.project.id), a.ensure(h.project.id)]);
    await createWebhookRegistrar(h.client, settings).ensure(h.project.id);
    const hooks = (await h.client.webhooks.list(h.project.id)).data;
    expect(hooks.filter((w) => w.url === 'http://bot.example.test/slipway/webhooks')).toHaveLength(1);
    expect(hooks.filter((w) => w.url === `${h.botUrl}/slipway/webhooks`)).toHaveLength(1);
    expect(hooks.find((w) => w.url.startsWith('http://bot.example.test'))!.events).toEqual([
      'deployment.created',
      'deployment.building',
      'deployment.deploying',
      'deployment.success',
      'deployment.failed',
      'deployment.promoted',
    ]);
  });

  it('rotates the service webhook secret: the new registration replaces the old, both secrets verify meanwhile', async () => {
    const url = 'http://rotate.example.test/slipway/webhooks';
    const old = { botUrl: 'http://rotate.example.test', serviceWebhookSecret: SERVICE_SECRET };
    await createWebhookRegistrar(h.client, old).ensure(h.project.id);
    const before = (await h.client.webhooks.list(h.project.id, { limit: 100 })).data.filter(
      (w) => w.url === url,
    );
    expect(before).toHaveLength(1);
    const rotating = {
      ...old,
      serviceWebhookSecret: 'the-new-service-secret-0123',
      previousServiceWebhookSecret: SERVICE_SECRET,
    };
    await createWebhookRegistrar(h.client, rotating).ensure(h.project.id);
    const after = (await h.client.webhooks.list(h.project.id, { limit: 100 })).data.filter(
      (w) => w.url === url,
    );
    expect(after).toHaveLength(1);
    expect(after[0]!.id).not.toBe(before[0]!.id);

    const raw = Buffer.from(
      JSON.stringify({
        event: 'deployment.created',
        timestamp: new Date().toISOString(),
        data: { deploymentId: 'dpl_x' },
      }),
    );
    const seen = { checkAndAdd: () => false } as never;
    const accept = (signature: string) =>
      acceptDelivery(
        raw,
        { signature, deliveryId: 'whd_rotate', event: 'deployment.created' },
        {
          secret: 'the-new-service-secret-0123',
          previousSecret: SERVICE_SECRET,
          seen,
          now: () => new Date(),
        },
      ).kind;
    expect(accept(signPayload(SERVICE_SECRET, raw))).toBe('accepted');
    expect(accept(signPayload('the-new-service-secret-0123', raw))).toBe('accepted');
    expect(accept(signPayload('some-other-secret-entirely', raw))).toBe('refused');
  });
});

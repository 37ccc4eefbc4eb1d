import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeJson } from '../../server/core/json-column.ts';
import { parseRuntime } from '../../server/platform/store/deployment-runtime.ts';
import { toWebhook } from '../../server/features/webhooks/to-webhook.ts';

describe('JSON columns are read through their schema', () => {
  it('returns the value, or says which column is not JSON or which field is wrong', () => {
    const S = z.object({ slot: z.string() });
    expect(decodeJson(S, '{"slot":"2026-11-26T20:00:00.000Z"}', 'A payload')).toEqual({
      slot: '2026-11-26T20:00:00.000Z',
    });
    expect(() => decodeJson(S, '{"slot":', 'A payload')).toThrow('A payload is not JSON');
    expect(() => decodeJson(S, '{"slot":4}', 'A payload')).toThrow(
      'A payload is not valid: slot: Invalid input: expected string, received number',
    );
  });

  it('a stored row that does not hold what the code reads fails where it is read, naming the row', () => {
    const row = { id: 'wh_1', url: 'https://x.test', events: '["deployment.success","not-an-event"]' };
    expect(() => toWebhook({ ...row, active: 1, created_at: '' } as never)).toThrow(
      /^Webhook wh_1's events is not valid: 1: /,
    );
    expect(() => parseRuntime('dpl_1', '{"kind":"rocket"}')).toThrow(
      /^Deployment dpl_1's runtime is not valid: /,
    );
  });
});

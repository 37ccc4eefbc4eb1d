import { createHmac } from 'node:crypto';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { sign, verify } from '../../api/signature.ts';

const secret = 'a-secret-of-24-characters';
const body = JSON.stringify({
  event: 'deployment.success',
  timestamp: '2026-11-22T10:00:00.000Z',
  data: { deploymentId: 'dpl_0123456789abcdefghij', status: 'live', note: 'ünïcødé' },
});

describe('webhook signature', () => {
  it('is sha256= and the hex HMAC-SHA256 of the raw bytes', () => {
    const expected = createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex');
    expect(sign(secret, body)).toBe(`sha256=${expected}`);
    expect(sign(secret, Buffer.from(body, 'utf8'))).toBe(`sha256=${expected}`);
  });

  it('verifies with or without the prefix, in either hex case', () => {
    const header = sign(secret, body);
    expect(verify(secret, body, header)).toBe(true);
    expect(verify(secret, Buffer.from(body), header)).toBe(true);
    expect(verify(secret, body, header.slice('sha256='.length))).toBe(true);
    expect(verify(secret, body, `sha256=${header.slice(7).toUpperCase()}`)).toBe(true);
  });

  it('agrees with @octokit/webhooks-methods both ways', async () => {
    expect(await octokitSign(secret, body)).toBe(sign(secret, body));
    expect(await octokitVerify(secret, body, sign(secret, body))).toBe(true);
    expect(verify(secret, body, await octokitSign(secret, body))).toBe(true);
  });

  it('rejects a tampered body, a wrong secret and malformed headers', () => {
    const header = sign(secret, body);
    expect(verify(secret, body.replace('live', 'dead'), header)).toBe(false);
    expect(verify(secret, body + ' ', header)).toBe(false);
    expect(verify('another-secret-of-24-chars', body, header)).toBe(false);
    for (const bad of [
      undefined,
      null,
      '',
      'sha256=',
      'sha1=' + header.slice(7),
      header.slice(0, -2),
      header + '00',
      header.slice(0, -1) + 'g',
      'sha256=' + 'z'.repeat(64),
    ]) {
      expect(verify(secret, body, bad), String(bad)).toBe(false);
    }
  });
});

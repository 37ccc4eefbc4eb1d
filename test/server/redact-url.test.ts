import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../server/core/redact-url.ts';

describe('redactUrl', () => {
  it('hides the user part of absolute URLs', () => {
    expect(redactUrl('https://x-access-token:ghs_abc@github.com/o/r.git')).toBe(
      'https://***@github.com/o/r.git',
    );
    expect(redactUrl('https://oauth2:glpat-XYZ@gitlab.example/o/r.git?ref=main')).toBe(
      'https://***@gitlab.example/o/r.git?ref=main',
    );
    expect(redactUrl('https://github.com/o/r.git')).toBe('https://github.com/o/r.git');
  });

  it('hides the values of query parameters that carry credentials, and keeps the rest as written', () => {
    expect(redactUrl('/v1/deployments/dpl_1/logs?follow=true&token=slw_abcdefgh&x=%20')).toBe(
      '/v1/deployments/dpl_1/logs?follow=true&token=***&x=%20',
    );
    expect(redactUrl('/cb?code=abc&state=xyz')).toBe('/cb?code=***&state=xyz');
    expect(redactUrl('/f?access_token=a&api_key=b&X-Amz-Signature=c&client_secret=d&password=e#top')).toBe(
      '/f?access_token=***&api_key=***&X-Amz-Signature=***&client_secret=***&password=***#top',
    );
    // Names are judged decoded: %74oken is `token`.
    expect(redactUrl('/x?%74oken=abc')).toBe('/x?%74oken=***');
    expect(redactUrl('/x?page=2&limit=20&flag')).toBe('/x?page=2&limit=20&flag');
  });

  it("hides a deploy hook's secret, keeping the hook's id", () => {
    const secret = `slwh_${'x'.repeat(43)}`;
    expect(redactUrl(`/v1/hooks/deploy/dph_abcdefghij0123456789.${secret}`)).toBe(
      '/v1/hooks/deploy/dph_abcdefghij0123456789.***',
    );
    expect(redactUrl(`https://api.example.com/v1/hooks/deploy/dph_abc.${secret}?x=1`)).toBe(
      'https://api.example.com/v1/hooks/deploy/dph_abc.***?x=1',
    );
    // Not shaped like a hook's key: all of it is hidden.
    expect(redactUrl('/v1/hooks/deploy/pasted-secret-without-id')).toBe('/v1/hooks/deploy/***');
    // A hook secret anywhere else is a token like any other.
    expect(redactUrl(`/somewhere?q=${secret}`)).toBe('/somewhere?q=slwh_***');
  });

  it('hides Slipway and GitHub tokens wherever they are', () => {
    expect(redactUrl('/v1/slw_0123456789abcdef0123456789abcdef/x')).toBe('/v1/slw_***/x');
    expect(redactUrl('/r?q=ghp_0123456789abcdefABCDEF')).toBe('/r?q=ghp_***');
    expect(redactUrl('/r?q=github_pat_11AAAA_bbbb')).toBe('/r?q=github_pat_***');
  });
});

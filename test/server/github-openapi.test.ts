import { describe, expect, it } from 'vitest';
import { checkGitHubCall } from '../helpers/github-openapi.ts';

describe('the GitHub OpenAPI checker used by the action and bot tests', () => {
  it('accepts real operations with valid bodies', () => {
    expect(
      checkGitHubCall({
        method: 'POST',
        path: '/repos/octo/app/check-runs',
        body: {
          name: 'Slipway Preview',
          head_sha: 'a'.repeat(40),
          status: 'in_progress',
          external_id: 'dpl_x',
        },
      }),
    ).toBe('checks/create');
    expect(
      checkGitHubCall({
        method: 'GET',
        path: '/repos/octo/app/issues/3/comments',
        query: new URLSearchParams('per_page=100'),
      }),
    ).toBe('issues/list-comments');
    expect(
      checkGitHubCall({
        method: 'POST',
        path: '/repos/octo/app/deployments/9/statuses',
        body: { state: 'success', environment_url: 'http://x' },
      }),
    ).toBe('repos/create-deployment-status');
  });

  it('refuses unknown operations, fields, enum values and missing required fields', () => {
    expect(() => checkGitHubCall({ method: 'POST', path: '/repos/octo/app/previews' })).toThrow(
      /not an operation/,
    );
    expect(() =>
      checkGitHubCall({
        method: 'PATCH',
        path: '/repos/octo/app/check-runs/5',
        body: { conclusion: 'great' },
      }),
    ).toThrow(/conclusion must be one of/);
    expect(() =>
      checkGitHubCall({ method: 'POST', path: '/repos/octo/app/check-runs', body: { name: 'x' } }),
    ).toThrow(/head_sha is required/);
    expect(() =>
      checkGitHubCall({
        method: 'POST',
        path: '/repos/octo/app/issues/3/comments',
        body: { body: 'hi', colour: 'red' },
      }),
    ).toThrow(/colour is not a known field/);
    expect(() =>
      checkGitHubCall({
        method: 'GET',
        path: '/repos/octo/app/issues/3/comments',
        query: new URLSearchParams('nope=1'),
      }),
    ).toThrow(/unknown query parameter/);
  });
});

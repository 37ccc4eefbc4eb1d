import { describe, expect, it } from 'vitest';
import { hideHostPaths } from '../../../server/platform/sandbox/build-error.ts';

describe('hideHostPaths', () => {
  const dirs = [
    ['/var/lib/slipway/workspaces/dpl_1', '<workspace>'],
    ['/var/lib/slipway/workspaces', '<workspaces>'],
    ['/var/lib/slipway', '<data>'],
  ] as const;

  it("replaces the service's directories, the most specific first, every time they occur", () => {
    expect(
      hideHostPaths(
        "ENOENT: no such file or directory, lstat '/var/lib/slipway/workspaces/dpl_1/src/dist/x' (from /var/lib/slipway/workspaces/dpl_1)",
        dirs,
      ),
    ).toBe("ENOENT: no such file or directory, lstat '<workspace>/src/dist/x' (from <workspace>)");
    expect(hideHostPaths('open /var/lib/slipway/slipway.db', dirs)).toBe('open <data>/slipway.db');
    expect(hideHostPaths('nothing to hide', dirs)).toBe('nothing to hide');
  });

  it('never replaces the root directory', () => {
    expect(hideHostPaths('/usr/bin/git failed', [['/', '<root>']])).toBe('/usr/bin/git failed');
  });
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/platform/config.ts';
import { createSandbox, type Sandbox } from '../../server/platform/sandbox/index.ts';
import { systemLookup } from '../../server/core/ssrf.ts';

/**
 * This machine's npm registry answers from a documentation range (203.0.113.0/24), which the
 * sandbox refuses unless the operator allows it: tests that install from the registry do so.
 */
export const REGISTRY_ALLOW = '203.0.113.0/24';

let shared: Promise<Sandbox> | undefined;

/**
 * One real sandbox per test file for tests that run commands without a whole service. Where no
 * sandbox can run, it says so on stderr and runs commands directly (SLIPWAY_SANDBOX=off); the
 * security tests skip visibly there instead.
 */
export function testSandbox(env: Record<string, string> = {}): Promise<Sandbox> {
  shared ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-sandbox-'));
    const config = loadConfig({ SLIPWAY_DATA_DIR: dir, ...env });
    const opts = { dataDir: dir, workspacesDir: join(dir, 'workspaces'), lookup: systemLookup };
    const sandbox = await createSandbox(config.sandbox, opts);
    if (!sandbox.unavailable) return sandbox;
    process.stderr.write(
      `NOTICE: ${sandbox.unavailable}\nNOTICE: these tests run commands without the sandbox.\n`,
    );
    return createSandbox(loadConfig({ SLIPWAY_DATA_DIR: dir, SLIPWAY_SANDBOX: 'off' }).sandbox, opts);
  })();
  return shared;
}

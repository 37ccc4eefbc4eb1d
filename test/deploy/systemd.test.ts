import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const UNITS_DIR = join(ROOT, 'deploy/systemd');
const SCRIPT = join(ROOT, 'deploy/install-debian.sh');
const UNITS = [
  'slipway.service',
  'slipway-api.service',
  'slipway-worker.service',
  'slipway-edge.service',
  'slipway-bot.service',
];

const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
if (!ANALYZE) {
  process.stderr.write(
    'NOTICE: systemd-analyze is missing (apt-get install systemd): the systemd units are not verified.\n',
  );
}

const unit = (name: string) => readFileSync(join(UNITS_DIR, name), 'utf8');
/** The block every unit shares, from its first line to the first line after it. */
const shared = (text: string) => {
  const start = text.indexOf('# --- Shared by every Slipway unit');
  return text.slice(start, text.indexOf('\nNoNewPrivileges=no\n', start));
};
/** The last value a key is given in the [Service] section (later assignments win). */
const last = (text: string, key: string) => [...text.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].at(-1)?.[1];

describe('the systemd units', () => {
  it.skipIf(!ANALYZE)('pass systemd-analyze verify without a warning', () => {
    // verify checks that ExecStart's program exists: this machine's node, where it is.
    const dir = mkdtempSync(join(tmpdir(), 'slipway-units-'));
    try {
      for (const u of UNITS)
        writeFileSync(join(dir, u), unit(u).replaceAll('/usr/bin/node ', `${process.execPath} `));
      const r = spawnSync(ANALYZE!, ['verify', '--man=no', ...UNITS.map((u) => join(dir, u))], {
        encoding: 'utf8',
      });
      expect(r.stderr + r.stdout).toBe('');
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!ANALYZE)(
    "rate as systemd-analyze security says: API and App well confined, the sandbox's roles less",
    () => {
      const exposure = (u: string) => {
        const out = execFileSync(ANALYZE!, ['security', '--offline=true', join(UNITS_DIR, u)], {
          encoding: 'utf8',
        });
        return Number(/Overall exposure level for \S+: ([\d.]+)/.exec(out)![1]);
      };
      expect(exposure('slipway-api.service')).toBeLessThanOrEqual(3);
      expect(exposure('slipway-bot.service')).toBeLessThanOrEqual(3);
      // Root with namespaces, devices and control groups open for the sandbox.
      expect(exposure('slipway-worker.service')).toBeLessThan(9);
    },
  );

  it('share one hardening block; roles that run tenant code keep NoNewPrivileges off, the API and App turn it on', () => {
    const block = shared(unit('slipway.service'));
    expect(block).toMatch(/ProtectSystem=strict\nProtectHome=yes\nPrivateTmp=yes/);
    expect(block).toMatch(/StateDirectory=slipway/);
    for (const u of UNITS) expect(shared(unit(u)), u).toBe(block);
    for (const u of ['slipway.service', 'slipway-worker.service', 'slipway-edge.service']) {
      expect(last(unit(u), 'NoNewPrivileges'), u).toBe('no');
      expect(last(unit(u), 'PrivateDevices'), u).toBeUndefined();
      expect(last(unit(u), 'RestrictNamespaces'), u).toBeUndefined();
    }
    for (const u of ['slipway-api.service', 'slipway-bot.service']) {
      expect(last(unit(u), 'NoNewPrivileges'), u).toBe('yes');
      expect(last(unit(u), 'CapabilityBoundingSet'), u).toBe('');
    }
    // A metrics port each: several units may run on one machine.
    const ports = UNITS.map((u) => /^Environment=SLIPWAY_METRICS_PORT=(\d+)$/m.exec(unit(u))?.[1]);
    expect(new Set(ports).size).toBe(UNITS.length);
    expect(ports).not.toContain(undefined);
    for (const u of UNITS.slice(1)) expect(unit(u)).toMatch(/^Conflicts=slipway\.service$/m);
  });
});

describe('deploy/install-debian.sh', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  /** Runs the script with these arguments, stdin closed (bash reads ~/.bashrc when stdin is a socket). */
  const run = async (...args: string[]) => {
    const r = spawnSync(SCRIPT, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('--dry-run prints every step and changes nothing', async () => {
    const before = existsSync('/etc/slipway');
    const r = await run('--dry-run');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^\+ env DEBIAN_FRONTEND=noninteractive apt-get install .*bubblewrap passt nftables e2fsprogs/m,
    );
    expect(r.stdout).toMatch(/^\+ modprobe -a loop nf_tables tun$/m);
    expect(r.stdout).toMatch(/^\+ useradd --system .* slipway-sandbox$/m);
    expect(r.stdout).toMatch(
      /^\+ install -m 0644 .*deploy\/systemd\/slipway-edge\.service \/etc\/systemd\/system\/slipway-edge\.service$/m,
    );
    expect(r.stdout).toMatch(
      /^\+ systemctl enable slipway\.service\n\+ systemctl restart slipway\.service$/m,
    );
    expect(existsSync('/etc/slipway')).toBe(before);
  });

  it('a role that does not exist is refused, naming it, before anything is done', async () => {
    const r = await run('--dry-run', '--roles', 'api,web');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /--roles: "web" is not a role; expected all, or a comma-separated list of api, worker, edge, bot/,
    );
    expect(r.stdout).toBe('');
  });

  it('--root installs into a throwaway root: units, code, a user, settings that load, and keeps them on a second run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'slipway-install-'));
    dirs.push(root);
    mkdirSync(join(root, 'etc'));
    writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
    writeFileSync(join(root, 'etc/group'), 'root:x:0:\n');
    writeFileSync(join(root, 'etc/shadow'), '');
    writeFileSync(join(root, 'etc/gshadow'), '');

    const r = await run('--root', root, '--roles', 'api,worker,edge');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // What changes the running machine is printed, not run.
    expect(r.stdout).toMatch(
      /^\+ systemctl restart slipway-api\.service slipway-worker\.service slipway-edge\.service$/m,
    );
    expect(r.stdout).toMatch(/^\+ sh -c cd \/opt\/slipway\.new && npm ci --omit=dev/m);

    expect(readdirSync(join(root, 'etc/systemd/system')).sort()).toEqual([...UNITS].sort());
    expect(readFileSync(join(root, 'etc/systemd/system/slipway-edge.service'), 'utf8')).toBe(
      unit('slipway-edge.service'),
    );
    expect(readFileSync(join(root, 'etc/modules-load.d/slipway.conf'), 'utf8')).toBe(
      'loop\nnf_tables\ntun\n',
    );
    expect(existsSync(join(root, 'opt/slipway/bin/slipway.js'))).toBe(true);
    expect(existsSync(join(root, 'opt/slipway/node_modules'))).toBe(false);
    expect(statSync(join(root, 'usr/local/bin/slipway')).mode & 0o777).toBe(0o755);
    expect(statSync(join(root, 'var/lib/slipway')).mode & 0o777).toBe(0o711);

    const user = /^slipway-sandbox:x:(\d+):(\d+):/m.exec(readFileSync(join(root, 'etc/passwd'), 'utf8'));
    expect(user).not.toBeNull();
    const envFile = join(root, 'etc/slipway/slipway.env');
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const env = parseDotenv(readFileSync(envFile, 'utf8'));
    expect(Buffer.from(env.SLIPWAY_ENCRYPTION_KEY!, 'base64')).toHaveLength(32);
    expect(env.SLIPWAY_METRICS_TOKEN).toMatch(/^[0-9a-f]{48}$/);
    expect(env.SLIPWAY_SANDBOX_USER).toBe(`${user![1]}:${user![2]}`);
    // The settings as the unit gives them to the service: they load.
    const config = loadConfig({
      ...env,
      SLIPWAY_DATA_DIR: join(root, 'var/lib/slipway'),
      SLIPWAY_METRICS_PORT: '9466',
    });
    expect(config.metrics).toMatchObject({ port: 9466, host: '127.0.0.1', enabled: true });
    expect(config.sandbox.user).toEqual({ uid: Number(user![1]), gid: Number(user![2]) });

    const again = await run('--root', root);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/kept as it is/);
    expect(parseDotenv(readFileSync(envFile, 'utf8'))).toEqual(env);
    expect(readFileSync(join(root, 'etc/passwd'), 'utf8').match(/^slipway-sandbox:/gm)).toHaveLength(1);
    // The code was swapped for the new copy, nothing of the staging left.
    expect(existsSync(join(root, 'opt/slipway/bin/slipway.js'))).toBe(true);
    expect(readdirSync(join(root, 'opt'))).toEqual(['slipway']);
  }, 60_000);
});

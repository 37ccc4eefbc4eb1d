// Tenant code that tries to escape: run by the security tests as a build script and as a server
// app. Every probe reports what happened instead of throwing, so one run answers every question.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';

const outcome = (fn) => {
  try {
    return fn();
  } catch (err) {
    return err.code ?? err.message;
  }
};

/** 'connected', or how the connection failed: to host:port, or to a unix socket's path. */
const dial = (host, port) =>
  new Promise((resolve) => {
    const socket = connect(port === undefined ? { path: host } : { host, port });
    const done = (result) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(2000, () => done('timeout'));
    socket.once('connect', () => done('connected'));
    socket.once('error', (err) => done(err.code));
  });

/** Directories above the working directory that hold a file named like the service's database. */
const walkUp = () => {
  const found = [];
  let dir = process.cwd();
  for (let i = 0; i < 12; i++) {
    const entries = outcome(() => readdirSync(dir));
    if (Array.isArray(entries) && entries.some((e) => e === 'slipway.db' || e === 'encryption.key'))
      found.push(dir);
    if (dir === '/') break;
    dir = dirname(dir);
  }
  return found;
};

/** Probes the service at `t` (paths, pids, ports) and returns what each attempt got. */
export async function attack(t) {
  const procs = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  const detached = spawn('sleep', ['300', t.marker], { detached: true, stdio: 'ignore' });
  detached.unref();
  return {
    uid: process.getuid(),
    dataDirEntries: outcome(() => readdirSync(t.dataDir)),
    readKey: outcome(() => readFileSync(`${t.dataDir}/encryption.key`, 'utf8').length),
    readDatabase: outcome(() => readFileSync(`${t.dataDir}/slipway.db`).length),
    walkUp: walkUp(),
    serviceEnviron: outcome(() => readFileSync(`/proc/${t.servicePid}/environ`, 'utf8').length),
    seesService: procs.some((p) =>
      outcome(() => readFileSync(`/proc/${p}/cmdline`, 'utf8'))
        .toString()
        .includes(t.serviceMarker),
    ),
    processCount: procs.length,
    signalService: outcome(() => process.kill(t.servicePid, 0) ?? 'signalled'),
    writeDataDir: outcome(() => writeFileSync(`${t.dataDir}/pwned`, 'x') ?? 'written'),
    writeOutside: outcome(() => writeFileSync(t.outsideFile, 'x') ?? 'written'),
    api: await dial('127.0.0.1', t.apiPort),
    edge: await dial('127.0.0.1', t.edgePort),
    postgres: await dial('127.0.0.1', 5432),
    apiIpv6: await dial('::1', t.apiPort),
    // The one port of the host's loopback the operator opened (SLIPWAY_SANDBOX_HOST_PORTS).
    openedPort: t.openedPort ? await dial('127.0.0.1', t.openedPort) : 'not asked',
    gateway: await Promise.all(t.gateways.map((g) => dial(g, t.apiPort))),
    hostAddresses: await Promise.all(t.hostAddresses.map((a) => dial(a, t.apiPort))),
    metadata: await dial('169.254.169.254', 80),
    // Unix sockets the service's side listens on: abstract ones belong to the network namespace,
    // ones with a path to the file system.
    abstractSocket: await dial(`\0${t.abstractSocket}`),
    unixSocket: await dial(t.unixSocket),
    privateRange: await dial('10.255.255.53', 53).then(async (dns) => ({
      dns,
      other: await dial('10.255.255.53', 80),
    })),
    workspaces: outcome(() => readdirSync(`${t.dataDir}/workspaces`)),
    artifacts: existsSync(`${t.dataDir}/artifacts`),
  };
}

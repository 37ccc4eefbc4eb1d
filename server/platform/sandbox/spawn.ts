import { lstatSync, readlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import type { PlanName } from '../../core/plan-limits.ts';
import type { SandboxGroup } from './cgroups.ts';
import { CONNECT_HELPER } from './connect-helper.ts';

/** Absolute paths of the programs the sandbox is made of (see detect.ts). */
export interface SandboxTools {
  bwrap: string;
  pasta: string;
  nft: string;
  prlimit: string;
  setpriv: string;
  /** bash: dash cannot close descriptors above 9, and pasta leaves one of those open. */
  bash: string;
}

export interface SandboxLimits {
  /** Processes (threads count too) at once inside one sandbox. */
  processes: number;
  /** Data segment (heap) of each process. */
  memoryBytes: number;
  /** Largest file a process may write; the disk watch bounds their sum (disk-watch.ts). */
  fileBytes: number;
  /** Size of the private /tmp, and of the private /dev/shm. */
  tmpBytes: number;
}

/**
 * What one sandbox may use as a whole, from its organization's plan (plan-limits.ts): its control
 * group's memory and CPU share (cgroups.ts).
 */
export interface SandboxShare {
  /** The plan's name, for messages (`the limit of the free plan`) and its CPU pool (cpu-pools.ts). */
  plan: PlanName;
  /** Every process of the sandbox together, shared memory and /tmp and /dev/shm pages included. */
  memoryBytes: number;
  /** CPU share under contention; 1 is the free plan's. */
  cpu: number;
  /** The plan's `cpu-cap` (cpu-pools.ts); absent or null: none. */
  cpuCap?: number | null;
}

/** One command to run inside a sandbox. Paths are the same inside as on the host. */
export interface SandboxRequest {
  argv: readonly string[];
  cwd: string;
  /** The command's whole environment: nothing else reaches it. */
  env: Readonly<Record<string, string>>;
  /** Host directories bound read-write (the build workspace). */
  writable: readonly string[];
  /** Host paths bound read-only besides the toolchains (a local repository, an app's files). */
  readOnly: readonly string[];
  /**
   * Host directories bound read-write at another path, after the others (a server app's own
   * cache folder inside its read-only files). The target must exist under a bound path.
   */
  binds?: readonly { source: string; target: string }[];
  /** Ports of the host's 127.0.0.1 forwarded to the same port inside (a server app's PORT). */
  ports?: readonly number[];
  /**
   * false: no network at all (only a loopback of its own), and no user-mode network to set up,
   * which makes the sandbox start several times faster: for git reading a local repository.
   */
  network?: boolean;
  /** Its control group's limits; default SLIPWAY_SANDBOX_MEMORY and a CPU share of 1. */
  share?: SandboxShare;
}

export interface SpawnPlan {
  command: string;
  args: string[];
  /** Environment of the command spawned on the host: never the tenant's (LD_PRELOAD, ...). */
  env: Record<string, string>;
  /** Written to the child's fd 3, where bwrap reads the rest of its arguments. */
  fd3?: Buffer;
  /** A spare (planSpare): fd 3 is a pipe written later, with spareInput(). */
  fd3Later?: true;
  /**
   * The child's fd 4 (a socket pair) carries `listening` once the first of `ports` accepts TCP
   * connections inside the sandbox (see READY_WATCH), and its fd 5 is a Node IPC channel to the
   * connection helper started then (connect-helper.ts). Set for requests with `ports`.
   */
  readyFd?: 4;
  /** Host user to run as (set when the service runs as root). */
  uid?: number;
  gid?: number;
  /**
   * The sandbox's control group: its first process joins it before anything else runs, and
   * spawnPlanned() releases it (release()) when that process ends.
   */
  group?: SandboxGroup;
}

export interface SpawnSettings {
  tools: SandboxTools;
  limits: SandboxLimits;
  /** nftables rules for the network namespace (network-policy.ts). */
  rules: string;
  /** Host paths shown read-only to every sandbox: toolchains outside /usr, the operator's list. */
  toolchains: readonly string[];
  /** Directory holding the sandbox's /etc/passwd and /etc/group. */
  etcDir: string;
  /** Host user to run as, or undefined to stay the service's user (when it is not root). */
  user?: { uid: number; gid: number };
  /** Ports of the host's 127.0.0.1 reachable inside at 127.0.0.1 (SLIPWAY_SANDBOX_HOST_PORTS). */
  hostPorts?: readonly number[];
  /** The node that runs a server app's connection helper (connect-helper.ts). */
  node: string;
}

/**
 * git's global configuration inside the sandbox: a local repository belongs to another user than
 * the sandbox's, and git 2.39 reads safe.directory from no other place than a global file.
 */
export const SANDBOX_GITCONFIG = '/etc/slipway-gitconfig';

/** The uid and gid tenant code sees inside; on the host it is `user` or the service's own. */
export const INSIDE_UID = 1000;

/** What of /etc tenant code sees: name resolution, certificates, time zones, Debian's alternatives. */
const ETC = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'ssl',
  'pki',
  'resolv.conf',
  'hosts',
  'host.conf',
  'nsswitch.conf',
  'gai.conf',
  'localtime',
  'timezone',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'mime.types',
  'protocols',
  'services',
  'os-release',
  'debian_version',
];

/** /bin, /lib, ... : symbolic links into /usr on merged systems, bound as they are otherwise. */
function rootDirs(): string[] {
  const args: string[] = [];
  for (const dir of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    try {
      const stat = lstatSync(dir);
      if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
      else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
    } catch {
      // Not on this system.
    }
  }
  return args;
}

/**
 * Started in the background by the sandbox's shell of a server app, inside its network namespace
 * but outside bwrap (tenant code cannot see or signal it): tries the app's port on the namespace's
 * 127.0.0.1 every 5 ms and writes `listening` to fd 4 once it accepts, then, when the service
 * writes a line back (a moment later: the helper's start would otherwise compete with the app's
 * first requests for the CPU), becomes the connection helper (connect-helper.ts) on the IPC
 * channel at fd 5, in a process group of its own (an app's CPU and memory figures sum its
 * group, and the helper is the edge's cost, not the app's; it still ends with the sandbox, whose
 * PID namespace ends with its first process). The host side of pasta's forward accepts before
 * the app listens, so only a look inside tells; reading /proc/<pid>/net/tcp instead walks the
 * kernel's whole connection table (about 5 ms a read here, on the service's event loop). The
 * watch never outlives the start: it ends when the service closes its end of fd 4, and with the
 * sandbox's first process. The app sees one connection that closes.
 */
const READY_WATCH =
  '{ while ! { exec 6<>"/dev/tcp/127.0.0.1/$SLIPWAY_READY_PORT"; } 2>/dev/null; do ' +
  'read -r -t 0.005 -u 4 _; [ $? -gt 128 ] || exit 0; done; exec 6>&-; echo listening >&4; ' +
  'read -r -u 4 _ || exit 0; exec 4>&-; ' +
  'exec setsid "$SLIPWAY_NODE" --v8-pool-size=1 -e "$SLIPWAY_CONNECT_HELPER" >/dev/null; } 3<&- &';

/**
 * The host side runs, in order: setpriv (the whole tree dies with the service), pasta (a new user
 * and network namespace with user-mode networking; nothing of the host's loopback or gateway is
 * mapped in), a shell that loads the nftables rules while it still holds the namespace's
 * capabilities, prlimit (the limits), and bwrap, which drops every capability, makes new user, PID,
 * IPC and UTS namespaces and a file system with only what the request names, and runs the command.
 * Tenant code therefore can neither change the rules nor see a process outside its sandbox.
 */
export function planSpawn(s: SpawnSettings, req: SandboxRequest, group?: SandboxGroup): SpawnPlan {
  return plan(s, req, bwrapOptions(s, req), group);
}

/**
 * A server app's sandbox started ahead of its command, on `port`: pasta's network is up and the
 * rules are loaded, and its shell waits on fd 3 for spareInput() (the command, then bwrap's
 * options), then goes on as planSpawn()'s would. Starting an app in it saves pasta's start and
 * the rules' load (about 30 ms of a cold start). Mind `generation`: rules change with the allow
 * list.
 */
export function planSpare(s: SpawnSettings, port: number, group?: SandboxGroup): SpawnPlan {
  return plan(s, { argv: [], cwd: '/', env: {}, writable: [], readOnly: [], ports: [port] }, null, group);
}

/** What a spare sandbox (planSpare) reads on its fd 3 to run `req`. */
export function spareInput(s: SpawnSettings, req: SandboxRequest): Buffer {
  const fields = [String(req.argv.length), ...req.argv, ...bwrapOptions(s, req)];
  return Buffer.from(fields.map((a) => `${a}\0`).join(''));
}

/** bwrap's options for `req`: namespaces, mounts, working directory and environment. */
function bwrapOptions(s: SpawnSettings, req: SandboxRequest): string[] {
  const { limits } = s;
  const bwrap: string[] = [
    '--unshare-user',
    '--uid',
    String(INSIDE_UID),
    '--gid',
    String(INSIDE_UID),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    '--disable-userns',
    // No --new-session: the service spawns the sandbox as a session leader without a terminal
    // (detached), so there is no terminal to inject into, and the app stays in the process group
    // whose CPU and memory the edge samples.
    '--die-with-parent',
    '--ro-bind',
    '/usr',
    '/usr',
    ...rootDirs(),
    ...ETC.flatMap((name) => ['--ro-bind-try', `/etc/${name}`, `/etc/${name}`]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(limits.tmpBytes),
    '--perms',
    '1777',
    '--tmpfs',
    '/tmp',
    // bwrap's /dev/shm is a folder of its /dev, a tmpfs as large as half the machine's memory:
    // a private one of the /tmp's size instead.
    '--size',
    String(limits.tmpBytes),
    '--perms',
    '1777',
    '--tmpfs',
    '/dev/shm',
  ];
  bwrap.push(
    '--ro-bind',
    `${s.etcDir}/passwd`,
    '/etc/passwd',
    '--ro-bind',
    `${s.etcDir}/group`,
    '/etc/group',
    '--ro-bind',
    `${s.etcDir}/gitconfig`,
    SANDBOX_GITCONFIG,
  );
  for (const path of s.toolchains) bwrap.push('--ro-bind-try', path, path);
  for (const path of req.readOnly) bwrap.push('--ro-bind', path, path);
  for (const path of req.writable) bwrap.push('--bind', path, path);
  for (const b of req.binds ?? []) bwrap.push('--bind', b.source, b.target);
  // What bwrap made to hold the mounts (the path down to a workspace) becomes read-only.
  bwrap.push('--remount-ro', '/', '--chdir', req.cwd, '--clearenv');
  // Only options travel through fd 3 (bwrap wants the command on its command line); the
  // environment among them, so that secret values never show in the host's process list.
  for (const [key, value] of Object.entries(req.env)) bwrap.push('--setenv', key, value);
  return bwrap;
}

/**
 * The plan of `req` with `bwrap`'s options written to fd 3 at spawn; with `bwrap` null, a spare:
 * the command and bwrap's options come on fd 3 later (spareInput).
 */
function plan(
  s: SpawnSettings,
  req: SandboxRequest,
  bwrap: string[] | null,
  group: SandboxGroup | undefined,
): SpawnPlan {
  const { tools } = s;
  const limitArgs = prlimitOptions(s.limits);
  if (req.network === false && bwrap) return planOffline(s, req, bwrap, group, limitArgs);
  const ready = req.ports?.length ? req.ports[0] : undefined;
  const prlimit = [...limitArgs, tools.bwrap, '--args', '3', '--', ...req.argv];
  return launch(s, group, {
    args: [
      '--pdeathsig',
      'KILL',
      '--',
      tools.pasta,
      ...pastaOptions(s, req),
      '--',
      tools.bash,
      '-c',
      shellScript(tools, bwrap === null, ready),
      'sandbox',
      tools.prlimit,
      ...prlimit,
    ],
    env: {
      PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
      SLIPWAY_NFT_RULES: s.rules,
      ...(ready
        ? { SLIPWAY_READY_PORT: String(ready), SLIPWAY_NODE: s.node, SLIPWAY_CONNECT_HELPER: CONNECT_HELPER }
        : {}),
    },
    ...(bwrap ? { fd3: Buffer.from(bwrap.map((a) => `${a}\0`).join('')) } : { fd3Later: true as const }),
    ...(ready ? { readyFd: 4 as const } : {}),
  });
}

/** pasta's options: the namespace's network, and which ports reach in and out. */
function pastaOptions(s: SpawnSettings, req: SandboxRequest): string[] {
  return [
    '--quiet',
    '--foreground',
    '--config-net',
    // Without these the namespace would reach the host's loopback through the gateway address
    // (--no-map-gw) and through every port bound on the host (-T/-U auto, pasta's default). Only
    // the ports the operator lists reach the host's loopback, at the namespace's own 127.0.0.1.
    '--no-map-gw',
    '-T',
    s.hostPorts?.length ? s.hostPorts.join(',') : 'none',
    '-U',
    'none',
    '-u',
    'none',
    '-t',
    req.ports?.length ? req.ports.map((p) => `127.0.0.1/${p}`).join(',') : 'none',
  ];
}

/**
 * The shell inside pasta's namespace. It closes every descriptor but the arguments' (and the
 * readiness socket of a server app, on port `ready`; pasta leaves some of its own open), loads the
 * rules, reads a spare's command (`spare`), starts the readiness watch of a server app, then
 * becomes prlimit, which becomes bwrap.
 */
function shellScript(tools: SandboxTools, spare: boolean, ready: number | undefined): string {
  return [
    `for fd in $(ls /proc/self/fd); do [ "$fd" -le ${ready ? 5 : 3} ] || eval "exec $fd>&-"; done`,
    `printf '%s' "$SLIPWAY_NFT_RULES" | ${tools.nft} -f - || { echo "slipway: the sandbox's network rules could not be loaded" >&2; exit 125; }`,
    'unset SLIPWAY_NFT_RULES',
    // A spare: its command first, each argument ended by a NUL (bash reads a pipe a byte at a
    // time, so what follows stays for bwrap).
    ...(!spare
      ? []
      : [
          `IFS= read -r -d '' -u 3 n || exit 125`,
          `args=(); while [ "\${#args[@]}" -lt "$n" ]; do IFS= read -r -d '' -u 3 a || exit 125; args+=("$a"); done`,
          'set -- "$@" "${args[@]}"',
        ]),
    ...(ready
      ? [
          READY_WATCH,
          'unset SLIPWAY_READY_PORT SLIPWAY_NODE SLIPWAY_CONNECT_HELPER NODE_CHANNEL_FD NODE_CHANNEL_SERIALIZATION_MODE',
          'exec 4>&- 5>&-',
        ]
      : []),
    'exec "$@"',
  ].join('\n');
}

/** prlimit's options, up to its `--`. */
function prlimitOptions(limits: SandboxLimits): string[] {
  return [
    `--nproc=${limits.processes}`,
    `--data=${limits.memoryBytes}`,
    `--fsize=${limits.fileBytes}`,
    '--core=0',
    '--',
  ];
}

/**
 * A request without network: bwrap's own network namespace, nothing but a loopback of its own,
 * and no pasta. prlimit runs inside bwrap's user namespace here: RLIMIT_NPROC counts the processes
 * of the user in the namespace where it is set, and outside that is the host's, where every
 * sandbox (and, as root, every other service using the same SLIPWAY_SANDBOX_USER) runs as the same
 * user. With pasta, the limit is set inside pasta's own user namespace.
 */
function planOffline(
  s: SpawnSettings,
  req: SandboxRequest,
  bwrap: string[],
  group: SandboxGroup | undefined,
  limitArgs: string[],
): SpawnPlan {
  const { tools } = s;
  const options = Buffer.from(['--unshare-net', ...bwrap].map((a) => `${a}\0`).join(''));
  return launch(s, group, {
    args: [
      '--pdeathsig',
      'KILL',
      '--',
      tools.bwrap,
      '--args',
      '3',
      '--',
      tools.prlimit,
      ...limitArgs,
      ...req.argv,
    ],
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    fd3: options,
  });
}

/**
 * Joins the control group, in a shell that writes its own pid to each of the group's cgroup.procs
 * files and then becomes setpriv: every process of the sandbox is the group's from its first
 * instruction on, and a write that fails ends it before anything runs. The shell runs as the
 * service's user (cgroup files are root's, or the service's where a subtree is delegated to it);
 * setpriv then changes to the sandbox's user, where spawn() would have without a group.
 */
const JOIN_GROUP =
  'n=$1; shift; while [ "$n" -gt 0 ]; do ' +
  'echo $$ > "$1" || { echo "slipway: could not join the sandbox\'s control group ($1)" >&2; exit 125; }; ' +
  'shift; n=$((n - 1)); done; exec "$@"';

/** The plan that runs setpriv with `rest.args`, as the sandbox's user, in `group` when there is one. */
function launch(
  s: SpawnSettings,
  group: SandboxGroup | undefined,
  rest: Omit<SpawnPlan, 'command' | 'uid' | 'gid' | 'group'>,
): SpawnPlan {
  if (!group) {
    return { command: s.tools.setpriv, ...rest, ...(s.user ? { uid: s.user.uid, gid: s.user.gid } : {}) };
  }
  const user = s.user ? [`--reuid=${s.user.uid}`, `--regid=${s.user.gid}`, '--clear-groups'] : [];
  return {
    ...rest,
    command: s.tools.bash,
    args: [
      '-c',
      JOIN_GROUP,
      'sandbox',
      String(group.procs.length),
      ...group.procs,
      s.tools.setpriv,
      ...user,
      ...rest.args,
    ],
    group,
  };
}

/** The toolchain directories to show besides /usr: where this node lives, when elsewhere. */
export function toolchainDirs(execPath: string, extra: readonly string[]): string[] {
  const prefix = dirname(dirname(execPath));
  const dirs = prefix === '/usr' || prefix.startsWith('/usr/') ? [] : [prefix];
  return [...dirs, ...extra];
}

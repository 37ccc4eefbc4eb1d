import { resolve } from 'node:path';
import { type Env, list } from './env-schema.ts';

/** Logs, the sandbox of tenant code, and local repositories. */
export function sandboxSettings(env: Env) {
  return {
    logLevel: env.LOG_LEVEL,
    /** `json` or `pretty`; unset: pretty on a terminal (server/core/log-format.ts). */
    logFormat: env.SLIPWAY_LOG_FORMAT,
    /** How tenant code (git, install, build, server apps) is contained: see docs/security.md. */
    sandbox: {
      mode: env.SLIPWAY_SANDBOX,
      /** Host user that tenant code runs as when the service runs as root. */
      user: env.SLIPWAY_SANDBOX_USER,
      /** Private addresses, ranges and host names tenant code may reach anyway. */
      allow: list(env.SLIPWAY_SANDBOX_ALLOW),
      /** Ports of services on this host's 127.0.0.1 that tenant code reaches at 127.0.0.1:<port>. */
      hostPorts: [...new Set(list(env.SLIPWAY_SANDBOX_HOST_PORTS).map(Number))],
      /** Host paths shown read-only besides /usr and the node toolchain. */
      readOnly: list(env.SLIPWAY_SANDBOX_READ_ONLY),
      /** `auto`: the kernel holds SLIPWAY_SANDBOX_DISK where it can; `watch`: du every second. */
      diskMode: env.SLIPWAY_SANDBOX_DISK_MODE,
      limits: {
        processes: env.SLIPWAY_SANDBOX_PROCESSES,
        memoryBytes: env.SLIPWAY_SANDBOX_MEMORY,
        diskBytes: env.SLIPWAY_SANDBOX_DISK,
        tmpBytes: env.SLIPWAY_SANDBOX_TMP_SIZE,
      },
    },
    /** Bytes of build log stored per deployment; past it the log says so and the build goes on. */
    buildLogLimitBytes: env.SLIPWAY_BUILD_LOG_LIMIT,
    /**
     * Bytes of runtime log each server app may store per hour (per edge process); past it the log
     * says so and the app goes on. Per hour, unlike the build log: an app runs for weeks and its
     * latest lines matter most, so a cap for good would silence it when it is needed.
     */
    runtimeLogLimitBytes: env.SLIPWAY_RUNTIME_LOG_LIMIT,
    /** `any` (outside the data and artifacts dirs), `off`, or the directories local repositories may be in. */
    localRepositories:
      env.SLIPWAY_LOCAL_REPOSITORIES === 'any' || env.SLIPWAY_LOCAL_REPOSITORIES === 'off'
        ? env.SLIPWAY_LOCAL_REPOSITORIES
        : list(env.SLIPWAY_LOCAL_REPOSITORIES).map((p) => resolve(p)),
  };
}

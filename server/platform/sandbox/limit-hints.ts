import { describeBytes } from '../../core/format.ts';
import { LIMIT_HIT_CPU_SHARE, type GroupEnd } from './cgroups.ts';
import type { Sandbox, SandboxShare } from './index.ts';
import type { SandboxLimit } from '../ops-metrics/ops-metrics.ts';

/**
 * Says, when the kernel killed a process of the sandbox for its control group's memory limit, what
 * the limit was and whose; null when it did not.
 */
export function memoryLimitHint(
  what: string,
  group: GroupEnd | undefined,
  share: SandboxShare | undefined,
): string | null {
  if (!group?.oomKills) return null;
  const whose = share ? `, the limit of the ${share.plan} plan` : ' (SLIPWAY_SANDBOX_MEMORY)';
  return (
    `${what} used more than ${describeBytes(group.memoryBytes)} of memory${whose}, ` +
    'counting every process, shared memory and files in /tmp and /dev/shm: the kernel stopped it.'
  );
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Says, when the sandbox's CPU share was lowered because it hit its process or memory limit
 * (cgroups.ts, LIMIT_HIT_CPU_SHARE), which limit and what the sandbox ran at then; else null.
 */
export function cpuLoweredNote(
  what: string,
  group: GroupEnd | undefined,
  limits: Sandbox['limits'],
  share: SandboxShare | undefined,
): string | null {
  if (!group?.cpuLowered) return null;
  const whose = share ? ` (${share.plan} plan)` : '';
  const why =
    group.cpuLowered === 'processes'
      ? `hit its limit of ${limits.processes} processes (SLIPWAY_SANDBOX_PROCESSES${group.forksRefused ? `; ${count(group.forksRefused, 'fork')} refused` : ''})`
      : `hit its memory limit of ${describeBytes(group.memoryBytes)} (${count(group.oomKills, 'process', 'processes')} stopped by the kernel)`;
  return `${what} ${why}: it ran at 1/${Math.round(1 / LIMIT_HIT_CPU_SHARE)} of its CPU share${whose} from then on.`;
}

/**
 * Says in words which sandbox limit a failed command most likely hit, from the last lines it
 * printed and how it ended, or null. Programs report a refused fork or allocation in their own
 * words; these are the ones node, npm, git and the shells use.
 */
export function limitHint(
  limits: Sandbox['limits'],
  output: readonly string[],
  signal: NodeJS.Signals | null,
): { limit: SandboxLimit; text: string } | null {
  const text = output.join('\n');
  if (signal === 'SIGXFSZ' || /File too large|File size limit exceeded|EFBIG/.test(text)) {
    return {
      limit: 'file_size',
      text: `A file grew past the limit of ${describeBytes(limits.fileBytes)} (SLIPWAY_SANDBOX_DISK).`,
    };
  }
  if (/Resource temporarily unavailable|EAGAIN|fork: retry|Cannot fork|spawn .*EAGAIN/i.test(text)) {
    return {
      limit: 'processes',
      text: `The build may have hit the limit of ${limits.processes} processes (SLIPWAY_SANDBOX_PROCESSES).`,
    };
  }
  if (
    /heap out of memory|Cannot allocate memory|allocation failed|ENOMEM|std::bad_alloc|Out of memory/i.test(
      text,
    )
  ) {
    return {
      limit: 'memory',
      text: `A process may have hit the memory limit of ${describeBytes(limits.memoryBytes)} per process (SLIPWAY_SANDBOX_MEMORY).`,
    };
  }
  if (/No space left on device|ENOSPC/.test(text)) {
    return {
      limit: 'tmp',
      text: `The private /tmp is full: it holds ${describeBytes(limits.tmpBytes)} (SLIPWAY_SANDBOX_TMP_SIZE).`,
    };
  }
  return null;
}

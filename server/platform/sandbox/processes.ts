import { readdirSync, readFileSync } from 'node:fs';

/** Every process below `pid` (children, their children, ...), read from /proc. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const next = queue.shift()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${next}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${next}/task/${task}/children`, 'utf8');
      } catch {
        // Gone meanwhile.
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

/** The command name of a process, or null when it is gone. */
export function commandName(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * Whether something in the network namespace of `pid` listens on TCP `port`: read from its
 * /proc/<pid>/net/tcp{,6}, since the host side of a forwarded port (pasta) accepts connections
 * before the app inside listens.
 */
export function listensOn(pid: number, port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN.
      if (fields[1]?.endsWith(`:${hex}`) && fields[3] === '0A') return true;
    }
  }
  return false;
}

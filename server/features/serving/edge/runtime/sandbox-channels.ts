import type { ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Helper } from './state.ts';

/** How long after an app listens its connection helper starts (see spawn.ts, READY_WATCH). */
const HELPER_START_DELAY_MS = 200;

/**
 * Resolves true when the sandbox writes `listening` to the child's readiness socket (fd 4, see
 * SpawnPlan.readyFd), false when the socket closes first; null without one (no sandbox).
 */
export function readiness(child: ChildProcess): Promise<boolean> | null {
  const socket = child.stdio[4] as Duplex | null | undefined;
  if (!socket) return null;
  return new Promise((resolve) => {
    let said = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      said += chunk;
      if (!said.includes('listening')) return;
      resolve(true);
      // Then the connection helper: once the app's first requests (through pasta) are answered.
      setTimeout(() => socket.end('helper\n'), HELPER_START_DELAY_MS).unref();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(false));
    // The watch ends when its socket does: with the sandbox gone it has nothing left to watch.
    child.once('exit', () => socket.destroy());
  });
}

/** The connection helper on the child's IPC channel, once it says it is ready; null without one. */
export function connectionHelper(child: ChildProcess): Helper | null {
  if (!child.send) return null;
  const helper: Helper = { child, ready: false, next: 0, pending: new Map() };
  child.on('message', (message: unknown, handle: unknown) => {
    if (typeof message !== 'object' || message === null) return;
    const m = message as { ready?: unknown; connected?: unknown; failed?: unknown };
    if (m.ready === true) helper.ready = true;
    const id = typeof m.connected === 'number' ? m.connected : m.failed;
    if (typeof id !== 'number') return;
    const done = helper.pending.get(id);
    helper.pending.delete(id);
    const socket = handle instanceof Socket && m.connected === id ? handle : null;
    // Too late (the edge went through pasta meanwhile): not needed any more.
    if (!done) socket?.destroy();
    else done(socket);
  });
  child.on('disconnect', () => {
    helper.ready = false;
    for (const done of helper.pending.values()) done(null);
    helper.pending.clear();
  });
  // The channel must not keep the service running, nor fail it.
  child.on('error', () => undefined);
  return helper;
}

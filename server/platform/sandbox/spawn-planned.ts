import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import type { SpawnPlan } from './spawn.ts';

/**
 * Spawns a plan from Sandbox.plan() and writes bwrap's options to its fd 3. The child leads its
 * own process group (killing -pid ends the whole sandbox). stdout and stderr are pipes, and so is
 * the readiness socket of a server app (child.stdio[4], see SpawnPlan.readyFd); its fd 5 is the
 * IPC channel to its connection helper (child.send, 'message'). A spare's fd 3 stays open for
 * startSpare(). The plan's control group is released (its leftovers killed, the group removed) once
 * the child has ended: await `plan.group.release()` for how it ended.
 */
export function spawnPlanned(plan: SpawnPlan, opts: { cwd?: string } = {}): ChildProcess {
  let child: ChildProcess;
  try {
    child = spawnChild(plan, opts);
  } catch (err) {
    void plan.group?.release();
    throw err;
  }
  const group = plan.group;
  if (group) {
    // The sandbox ends with its first process (pasta, or bwrap without a network): what is left
    // in its group (a process that escaped the process group) goes with it.
    child.once('exit', () => void group.release());
    child.once('error', () => void group.release());
  }
  return child;
}

function spawnChild(plan: SpawnPlan, opts: { cwd?: string }): ChildProcess {
  const child = spawn(plan.command, plan.args, {
    // The sandbox sets its own directory; '/' keeps the service's from showing in its environment.
    cwd: opts.cwd ?? '/',
    env: plan.env,
    detached: true,
    stdio: [
      'ignore',
      'pipe',
      'pipe',
      plan.fd3 || plan.fd3Later ? 'pipe' : 'ignore',
      ...(plan.readyFd ? (['pipe', 'ipc'] as const) : []),
    ],
    ...(plan.uid !== undefined ? { uid: plan.uid, gid: plan.gid } : {}),
  });
  const options = child.stdio[3] as Writable | null;
  if (options && plan.fd3) {
    // The sandbox may end before reading it all (a failed start): nothing to report then.
    options.on('error', () => undefined);
    options.end(plan.fd3);
  }
  return child;
}

/** Starts `req` in a spare sandbox spawned from Sandbox.planSpare(), writing its fd 3. */
export function startSpare(child: ChildProcess, input: Buffer): void {
  const options = child.stdio[3] as Writable | null;
  if (!options) throw new Error('not a spare sandbox: its fd 3 is not a pipe');
  options.on('error', () => undefined);
  options.end(input);
}

import { connect, createServer } from 'node:net';

const tryListen = (port: number) =>
  new Promise<number | null>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : null;
      server.close(() => resolve(bound));
    });
  });

/**
 * A port on 127.0.0.1 that nothing listens on right now: the first free one of `range`, or one
 * the kernel picks. Another process may still take it before the app binds it; the supervisor's
 * start timeout and restart cover that rare race.
 */
export async function findFreePort(range?: readonly [number, number], skip?: ReadonlySet<number>) {
  if (!range) {
    const port = await tryListen(0);
    if (port === null) throw new Error('no free port on 127.0.0.1');
    return port;
  }
  for (let port = range[0]; port <= range[1]; port++) {
    if (skip?.has(port)) continue;
    if ((await tryListen(port)) !== null) return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${range[0]} and ${range[1]}`);
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isAccepting(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { findFreePort } from '../../server/core/free-port.ts';
import { startStack } from '../helpers/stack.ts';

it('an edge whose HTTPS port is taken fails its start naming it, and leaves its HTTP port free again', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const tlsPort = (taken.address() as { port: number }).port;
  const edgePort = await findFreePort();
  try {
    const failed = await startStack({
      env: { SLIPWAY_EDGE_PORT: String(edgePort), SLIPWAY_EDGE_TLS_PORT: String(tlsPort) },
    }).then(
      (s) => s.stop().then(() => null),
      (err: Error) => err,
    );
    expect(failed?.message).toBe(
      `Port ${tlsPort} (the edge's HTTPS) is already in use: stop what listens there, or set SLIPWAY_EDGE_TLS_PORT to another port`,
    );
    // Nothing of the failed edge is left: its HTTP port can be listened on at once.
    expect(await findFreePort([edgePort, edgePort])).toBe(edgePort);
  } finally {
    taken.close();
  }
});

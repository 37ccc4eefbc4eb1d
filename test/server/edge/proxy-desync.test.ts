import { createServer as createHttpServer, request, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createProxy, type Proxy } from '../../../server/features/serving/edge/proxy.ts';

/**
 * A hostile server app against the edge's kept connections: it answers its first request and,
 * in the same write, a second complete response nobody asked for. The edge keeps connections to
 * an app and reuses them for the next visitors, so a proxy that took those bytes as the answer to
 * the next request on that connection would hand one visitor's page to another (response queue
 * poisoning). The smuggled answer must reach no one, and the app must still serve honestly after.
 */
describe('the edge proxy against an app that smuggles a response', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  const listen = async (server: Server | ReturnType<typeof createTcpServer>) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return (server.address() as AddressInfo).port;
  };

  const get = (port: number, path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  it('never gives the smuggled answer to the next visitor, and keeps serving the honest one', async () => {
    const sockets = new Set<Socket>();
    let served = 0;
    const app = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      let buffered = '';
      socket.on('data', (d) => {
        buffered += d.toString('latin1');
        while (buffered.includes('\r\n\r\n')) {
          const end = buffered.indexOf('\r\n\r\n') + 4;
          const head = buffered.slice(0, end);
          buffered = buffered.slice(end);
          const path = head.split(' ')[1] ?? '';
          served++;
          const honest = `HTTP/1.1 200 OK\r\nContent-Length: ${path.length}\r\n\r\n${path}`;
          const smuggled = 'HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nPOISONED';
          socket.write(path === '/first' ? honest + smuggled : honest);
        }
      });
    });
    closers.push(async () => {
      for (const s of sockets) s.destroy();
    });
    const appPort = await listen(app);

    const proxy: Proxy = createProxy();
    closers.push(async () => proxy.close());
    const edge = createHttpServer((req, res) => {
      proxy.forward(req, res, appPort, { bytes: 0 }, 'dpl_attack');
    });
    const edgePort = await listen(edge);
    closers.push(async () => edge.closeAllConnections());

    const first = await get(edgePort, '/first');
    expect(first).toEqual({ status: 200, body: '/first' });

    // Visitors after it, one at a time, as they would reuse the kept connection.
    const after = [];
    for (const path of ['/second', '/third', '/fourth']) after.push(await get(edgePort, path));
    expect(after.map((a) => a.body)).toEqual(['/second', '/third', '/fourth']);
    expect(after.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(after.some((a) => a.body.includes('POISONED'))).toBe(false);
    // Each visitor's request reached the app: none was answered by the smuggled bytes.
    expect(served).toBe(4);
  });
});

/**
 * The edge's proxy alone, in its own process: a node:http server forwarding every request with
 * server/features/serving/edge/proxy.ts to the app on 127.0.0.1:$BENCH_TARGET_PORT (no routing, no sandbox), as
 * the edge forwards to a running app. Prints one JSON line, then serves until killed.
 */
import { createServer } from 'node:http';
import { createProxy } from '../server/features/serving/edge/proxy.ts';

const target = Number(process.env.BENCH_TARGET_PORT);
if (!target) throw new Error('BENCH_TARGET_PORT: the app to forward to');
const proxy = createProxy();
const counter = { bytes: 0 };
const server = createServer((req, res) => proxy.forward(req, res, target, counter, 'dpl_bench'));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n');
});

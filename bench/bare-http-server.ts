/**
 * The edge benchmark's Node.js ceiling, in its own process: a bare node:http server answering
 * one 10 KiB body from memory with the headers the edge sends for a static file. Prints one JSON
 * line, then serves until killed.
 */
import { createServer } from 'node:http';

const body = Buffer.from('x'.repeat(10 * 1024));
const headers = {
  'content-type': 'text/plain; charset=utf-8',
  'content-length': String(body.length),
  etag: '"bench"',
  'last-modified': new Date(0).toUTCString(),
  'cache-control': 'public, max-age=0, must-revalidate',
};
const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n');
});

import { open, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { EDGE_PAGES } from './pages.ts';
import { page } from './static-page.ts';
import type { ByteCounter, HeaderList, PreparedFile, StaticState } from './static-state.ts';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Sends bytes `start` to `end` of a blob or compressed copy: small files from memory (at once
 * when they are there: most of a site's requests, without a file handle each), others streamed
 * from disk.
 */
export function sendBytes(
  s: StaticState,
  req: IncomingMessage,
  res: ServerResponse,
  deploymentId: string,
  p: PreparedFile,
  path: string,
  size: number,
  start: number,
  end: number,
  code: number,
  headers: OutgoingHttpHeaders | HeaderList,
  counter: ByteCounter,
): void | Promise<void> {
  const { blobs } = s;
  if (size <= blobs.maxEntryBytes) {
    const inMemory = blobs.peek(path);
    if (inMemory) return writeBytes(req, res, inMemory, start, end, code, headers, counter);
    return blobs.read(path).then(
      (bytes) => writeBytes(req, res, bytes, start, end, code, headers, counter),
      (err: unknown) => {
        if (!isMissing(err)) throw err;
        counter.bytes += page(req, res, deploymentId, EDGE_PAGES.filesIncomplete(p.path));
      },
    );
  }
  return streamFile(req, res, deploymentId, p, path, start, end, code, headers, counter);
}

async function streamFile(
  req: IncomingMessage,
  res: ServerResponse,
  deploymentId: string,
  p: PreparedFile,
  path: string,
  start: number,
  end: number,
  code: number,
  headers: OutgoingHttpHeaders | HeaderList,
  counter: ByteCounter,
): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if (!isMissing(err)) throw err;
    counter.bytes += page(req, res, deploymentId, EDGE_PAGES.filesIncomplete(p.path));
    return;
  }
  res.writeHead(code, headers);
  if (req.method === 'HEAD') {
    await handle.close();
    res.end();
    return;
  }
  const stream = handle.createReadStream({ start, end, autoClose: true });
  stream.on('data', (chunk: string | Buffer) => {
    counter.bytes += chunk.length;
  });
  try {
    await pipeline(stream, res);
  } catch {
    // The client went away mid-body; the socket is already closed and there is nothing to answer.
  }
}

/** Writes a file's answer from its bytes in memory (the headers alone for HEAD). */
function writeBytes(
  req: IncomingMessage,
  res: ServerResponse,
  bytes: Buffer,
  start: number,
  end: number,
  code: number,
  headers: OutgoingHttpHeaders | HeaderList,
  counter: ByteCounter,
): void {
  res.writeHead(code, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const body = start === 0 && end === bytes.length - 1 ? bytes : bytes.subarray(start, end + 1);
  counter.bytes += body.length;
  res.end(body);
}

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../platform/config.ts';
import { hashKey, type BlobStore } from '../../platform/storage/blob-store.ts';
import { blobStoreOf } from '../../platform/storage/open-blob-store.ts';

/** Why an upload was refused; the bytes are not kept. */
export class UploadRefused extends Error {
  override name = 'UploadRefused';
  constructor(
    readonly reason: 'hash' | 'size',
    message: string,
  ) {
    super(message);
  }
}

export interface UploadStore {
  /** Copies the stored file to `dest`; false when it is not there. */
  copyTo(sha256: string, dest: string): Promise<boolean>;
  /** The size of the stored file, or null when it is not there. */
  size(sha256: string): Promise<number | null>;
  /**
   * Streams `body` into the store as `sha256`. The bytes must hash to it and be at most
   * `maxBytes`; otherwise UploadRefused and nothing is kept. Received aside and stored whole, so
   * a reader never sees half a file. Returns the size.
   */
  put(sha256: string, body: Readable, maxBytes: number): Promise<number>;
  /**
   * Like put, but the checked bytes wait aside until `keep()` puts them in place (`drop()` removes
   * them): the caller records them first, and a refused upload never shows in the store.
   */
  receive(sha256: string, body: Readable, maxBytes: number): Promise<Received>;
  /**
   * Reads `body` to its end and checks that it hashes to `sha256` within `maxBytes`, keeping
   * nothing (for a file the store has already): UploadRefused otherwise.
   */
  verify(sha256: string, body: Readable, maxBytes: number): Promise<number>;
  remove(sha256: string): Promise<void>;
}

/** Bytes received and checked, not yet in the store. */
export interface Received {
  size: number;
  keep(): Promise<void>;
  drop(): Promise<void>;
}

/** Passes bytes through, counting them against `maxBytes`; `check()` compares their hash. */
function hashingCounter(sha256: string, maxBytes: number) {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) {
        done(new UploadRefused('size', `is larger than the limit of ${maxBytes} bytes for one file`));
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const check = (): number => {
    const actual = hash.digest('hex');
    if (actual !== sha256) {
      throw new UploadRefused('hash', `does not match the bytes sent, which hash to ${actual}`);
    }
    return size;
  };
  return { stream, check };
}

/**
 * Uploaded files by content, `uploads/<first two hex>/<sha256>` in the blob store (the artifacts
 * directory, shared by every machine that builds and serves, or object storage). Bytes are
 * received into `stagingDir` on this machine and checked there. Which organization may use
 * which file is the database's business.
 */
export function createUploadStore(blobs: BlobStore, stagingDir: string): UploadStore {
  const key = (sha256: string) => hashKey('uploads', sha256);
  const receive = async (sha256: string, body: Readable, maxBytes: number): Promise<Received> => {
    await mkdir(stagingDir, { recursive: true });
    const tmp = join(stagingDir, `.${sha256}.${randomBytes(6).toString('hex')}.tmp`);
    const counter = hashingCounter(sha256, maxBytes);
    let size: number;
    try {
      await pipeline(body, counter.stream, createWriteStream(tmp, { mode: 0o644 }));
      size = counter.check();
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return {
      size,
      keep: async () => {
        try {
          await blobs.putIfAbsent(key(sha256), { file: tmp, move: true });
        } finally {
          await rm(tmp, { force: true });
        }
      },
      drop: () => rm(tmp, { force: true }),
    };
  };
  return {
    async copyTo(sha256, dest) {
      const local = blobs.localPath?.(key(sha256));
      if (local) {
        return copyFile(local, dest).then(
          () => true,
          (err: unknown) => {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
            throw err;
          },
        );
      }
      const body = await blobs.stream(key(sha256));
      if (!body) return false;
      await pipeline(body, createWriteStream(dest, { mode: 0o644 }));
      return true;
    },
    async size(sha256) {
      return (await blobs.head(key(sha256)))?.size ?? null;
    },
    async put(sha256, body, maxBytes) {
      const received = await receive(sha256, body, maxBytes);
      await received.keep();
      return received.size;
    },
    receive,
    async verify(sha256, body, maxBytes) {
      const counter = hashingCounter(sha256, maxBytes);
      await pipeline(body, counter.stream, new Writable({ write: (_c, _e, done) => done() }));
      return counter.check();
    },
    async remove(sha256) {
      await blobs.delete(key(sha256));
    },
  };
}

/** The service's upload store: in its blob store, received in the artifacts directory's `tmp`. */
export function uploadStoreOf(config: Pick<Config, 'artifactsDir' | 'objectStorage'>): UploadStore {
  return createUploadStore(blobStoreOf(config), join(config.artifactsDir, 'tmp'));
}

import { createArtifactReader, type ArtifactReader } from '../artifact-reader.ts';
import { createBlobCache } from '../blob-cache.ts';
import { createCompressedCache, type CompressedCache } from '../compression.ts';
import { proxyFor, type Proxy } from '../proxy.ts';
import { createStaticServer } from '../static.ts';
import type { EdgeServerOptions } from './types.ts';

/** What the edge's request functions share, made once per server. */
export interface EdgeContext {
  opts: EdgeServerOptions;
  artifacts: ArtifactReader;
  compressed: CompressedCache;
  /** Serves deployments' files. */
  files: ReturnType<typeof createStaticServer>;
  /** Forwards requests to server apps. */
  proxy: Proxy;
}

/** The edge's readers, caches, file server and proxy, from its options. */
export function createEdgeContext(opts: EdgeServerOptions): EdgeContext {
  const artifacts =
    opts.artifacts ??
    createArtifactReader(opts.artifactsRoot, {
      ...(opts.manifestCacheBytes ? { maxBytes: opts.manifestCacheBytes } : {}),
    });
  const compressed = createCompressedCache(opts.artifactsRoot);
  const blobs = createBlobCache(opts.fileCacheBytes ? { maxBytes: opts.fileCacheBytes } : {});
  const files = createStaticServer({ artifacts, compressed, blobs });
  const proxy = opts.proxy ?? proxyFor(opts.supervisor);
  return { opts, artifacts, compressed, files, proxy };
}

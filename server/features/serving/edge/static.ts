import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ArtifactReader } from './artifact-reader.ts';
import { createBlobCache, type BlobCache } from './blob-cache.ts';
import type { CompressedCache } from './compression.ts';
import type { Target } from './resolve-host.ts';
import { assetFrom, serveFrom, serveManifest } from './static-serve.ts';
import type { ByteCounter, StaticState } from './static-state.ts';

// The pieces a static answer is made of, each in a file of its own: which file a path names
// (static-paths.ts), what its answers share (static-prepared.ts), conditional and range requests
// (static-validators.ts), sending it (static-send.ts, static-bytes.ts), and routing rules
// (static-serve.ts). What they share is one StaticState, passed along.
export { isPrivatePath, matchPath, requestPath, type Match } from './static-paths.ts';
export type { ByteCounter } from './static-state.ts';

export interface StaticServerOptions {
  artifacts: ArtifactReader;
  compressed: CompressedCache;
  /** Small blobs kept in memory; default 256 MiB of files up to 256 KiB (blob-cache.ts). */
  blobs?: BlobCache;
}

/** Serves a deployment's files from its artifact. */
export function createStaticServer(opts: StaticServerOptions) {
  const s: StaticState = {
    artifacts: opts.artifacts,
    compressed: opts.compressed,
    blobs: opts.blobs ?? createBlobCache(),
    preparedFiles: new WeakMap(),
  };
  const { artifacts } = s;

  return {
    /**
     * Answers a request for a static target; never rejects for a client's mistake. Returns
     * undefined when it answered at once (everything was in memory), else the promise of the rest.
     * Every answer names the deployment (DEPLOYMENT_HEADER): the caller does not set it.
     */
    serve(
      req: IncomingMessage,
      res: ServerResponse,
      target: Target,
      counter: ByteCounter,
    ): void | Promise<void> {
      if (!target.artifactId) return serveFrom(s, req, res, target, null, counter);
      const loaded = artifacts.peek(target.artifactId);
      if (loaded) return serveManifest(s, req, res, target, loaded, counter);
      return artifacts
        .manifest(target.artifactId)
        .then((manifest) => serveManifest(s, req, res, target, manifest, counter));
    },

    /**
     * For a server app with assets (Target.assetsArtifactId): answers a GET or HEAD for exactly
     * the path of one of them and returns true (or a promise of it); returns false, having sent
     * nothing, for anything else, which is the app's to answer.
     */
    serveAsset(
      req: IncomingMessage,
      res: ServerResponse,
      target: Target,
      counter: ByteCounter,
    ): boolean | Promise<boolean> {
      const id = target.assetsArtifactId;
      if (!id || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
      const loaded = artifacts.peek(id);
      if (loaded) return assetFrom(s, req, res, target, loaded, counter);
      return artifacts.manifest(id).then((manifest) => assetFrom(s, req, res, target, manifest, counter));
    },
  };
}

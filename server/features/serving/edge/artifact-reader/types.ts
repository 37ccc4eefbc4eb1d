import type { ArtifactManifest as Manifest } from '../../../builds/roles.ts';
import type { LocalFiles } from '../../../../platform/storage/local-files.ts';
import type { RoutingRules } from '../../../../platform/routing/match-rules.ts';

export interface ArtifactReader {
  /** Where the artifacts are (a directory or an `s3://` URL). */
  root: string;
  /** Their files on this machine. */
  files: LocalFiles;
  /** The manifest, or null when the artifact does not exist. Cached: manifests are immutable. */
  manifest(artifactId: string): Promise<Manifest | null>;
  /** The manifest when it is already loaded (the edge's synchronous fast path), else undefined. */
  peek(artifactId: string): Manifest | undefined;
  /** Path of a blob on disk; see ensureBlob. */
  blobPath(hash: string): string;
  /**
   * Undefined when the blob can be read at blobPath now; else the promise of fetching it there
   * (object storage: a cold edge fetches each blob once), false when the store has none.
   */
  ensureBlob(hash: string): Promise<boolean> | undefined;
  /**
   * The routing rules (`_redirects`, `_headers`) in `folder` of a manifest's artifact (see
   * rulesFolderOf): NO_RULES at once when it has neither file; otherwise read and parsed on the
   * first call, then kept with the manifest (their size counted in its bound) and returned
   * without waiting. A failed read is not kept.
   */
  routingRules(manifest: Manifest, folder: string): RoutingRules | Promise<RoutingRules>;
}

export interface ArtifactReaderOptions {
  /**
   * Manifests kept, by the size of their files as stored (default 64 MiB; parsed, about twice
   * that in memory): about 300,000 single-file sites, or 9,500 sites of 60 files. Counted in
   * bytes rather than manifests because a manifest may list one file or 100,000.
   */
  maxBytes?: number;
  /** And at most this many manifests (default: no bound but `maxBytes`). */
  maxManifests?: number;
}

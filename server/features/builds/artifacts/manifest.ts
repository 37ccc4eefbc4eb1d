import { z } from 'zod';

/** One file of a deployment's site. */
export const ManifestFile = z.object({
  /** sha256 of the content, lowercase hex: the blob's name. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** Size in bytes. */
  size: z.number().int().nonnegative(),
  /** Set when the file was executable (a server app's binaries); static files never are. */
  executable: z.literal(true).optional(),
});
export type ManifestFile = z.infer<typeof ManifestFile>;

/**
 * `<root>/manifests/<id>.json`: what one build produced. Immutable once written. The content
 * of each file is `<root>/blobs/<first two hex of hash>/<hash>`.
 */
export const ArtifactManifest = z.object({
  /** `art_` followed by 20 lowercase alphanumerics. */
  id: z.string(),
  /** ISO 8601 time the artifact was stored. */
  createdAt: z.string(),
  /** Sum of the files' sizes in bytes. */
  totalBytes: z.number().int().nonnegative(),
  /** Site path (`/index.html`, `/assets/app.js`: leading slash, forward slashes) to file. */
  files: z.record(z.string().startsWith('/'), ManifestFile),
  /**
   * A server app's symbolic links (`node_modules/.bin/next`, a monorepo's workspace packages):
   * path to a relative target that stays inside the artifact. Static sites have none.
   */
  links: z.record(z.string().startsWith('/'), z.string().min(1)).optional(),
});
export type ArtifactManifest = z.infer<typeof ArtifactManifest>;

/** The key of an artifact's manifest in the blob store. */
export const manifestKey = (id: string) => `manifests/${id}.json`;

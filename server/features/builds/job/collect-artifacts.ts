import { type ArtifactStore, manifestKey } from '../artifacts.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { hashKey } from '../../../platform/storage/blob-store.ts';

const HOUR = 3_600_000;

/** What one collection did. */
export interface CollectedArtifacts {
  /** Manifests removed: of projects deleted longer than SLIPWAY_ARTIFACT_RETENTION, or of no deployment. */
  manifests: number;
  /**
   * Blobs newly found unreferenced (of a collected manifest, or, with `unlisted`, listed by no
   * manifest at all): removed by a collection at least `graceMs` later.
   */
  condemned: number;
  /** Blobs removed (condemned a grace period ago, and still unreferenced). */
  blobs: number;
  /** Condemned blobs referenced again since, and so kept. */
  spared: number;
}

/**
 * How long a blob found unreferenced waits before it goes, and how old a manifest of no
 * deployment must be to be collected: longer than any build runs (a build stores its blobs and
 * manifest before its deployment row names the manifest), and at least an hour.
 */
export const collectionGraceMs = (config: Pick<Deps['config'], 'buildTimeoutMs'>) =>
  Math.max(HOUR, 2 * config.buildTimeoutMs);

/**
 * Collects the artifacts no deployment needs, from the blob store (a directory or a bucket):
 *
 * 1. Manifests: those of deployments of projects deleted longer than SLIPWAY_ARTIFACT_RETENTION
 *    ago (kept that long so a backup from before the deletion still restores), and those no
 *    deployment names that are older than the grace period (a build that stored its output and
 *    then failed). Every other manifest is live, and so is every manifest younger than the grace.
 * 2. Blobs are shared, by content, between deployments and projects: a blob of a collected
 *    manifest is a candidate only when no live manifest lists it (references counted from the
 *    database's deployments, through their manifests). A candidate is not removed at once but
 *    condemned (a row in condemned_blobs), and removed by a collection at least the grace period
 *    later, if no live manifest lists it then: a build that found the blob before it was
 *    condemned has written its manifest by then. A build that looks for blobs after that first
 *    deletes their rows (rescueBlobs); the removal deletes the row and the object in one
 *    transaction, so either the build's delete comes first and the blob stays, or it waits for
 *    the removal and then finds no blob and writes it again.
 *
 * 3. With `unlisted` (the monitoring run asks at most daily: it lists every blob): blobs that no
 *    manifest ever listed, older than the grace period (a build that crashed between its blobs
 *    and its manifest, a deployment of uploaded files stored and never created). They are
 *    condemned like the others, never removed at once, because "no manifest lists it" is not
 *    "no build is about to": a build that found the blob already stored (and so did not write
 *    it again, leaving its modified time old) writes its manifest only at its end. The same two
 *    guards as for (2) cover every order of the two:
 *    - the build looked for its blobs before this collection condemned the blob (its rescue
 *      found no row): the row's grace period is longer than any build, so by the time the blob
 *      is due the build's manifest is written, and is live (young, or named by its deployment):
 *      the blob is in `referenced` then and is spared;
 *    - the build looks after: its rescue deletes the row first, and the blob is never removed;
 *      or the removal holds the row, the rescue waits for it, and the build then finds no blob
 *      and writes it again.
 *    So the only blobs removed are those no manifest listed during a whole grace period.
 *
 * The live manifests are read only when there is something to collect.
 */
export async function collectArtifacts(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  artifacts: ArtifactStore,
  opts: { unlisted?: boolean } = {},
): Promise<CollectedArtifacts> {
  const now = deps.clock.now().getTime();
  const c: Collection = {
    deps,
    artifacts,
    now,
    graceMs: collectionGraceMs(deps.config),
    done: { manifests: 0, condemned: 0, blobs: 0, spared: 0 },
  };
  const named = await namedArtifacts(c);
  const { live, garbage } = await listManifests(c, named);
  const due = await deps.db
    .selectFrom('condemned_blobs')
    .select('key')
    .where('since', '<=', new Date(now - c.graceMs).toISOString())
    .execute();
  if (garbage.length === 0 && due.length === 0 && !opts.unlisted) return c.done;

  // Everything a live manifest lists: read after the manifests were listed, so a build's manifest
  // written since is either listed here or younger than the grace at the next collection.
  const referenced = new Set<string>();
  for (const id of live) {
    const manifest = await artifacts.readManifest(id);
    for (const file of Object.values(manifest?.files ?? {})) referenced.add(hashKey('blobs', file.hash));
  }
  for (const { key } of due) await removeDue(c, key, referenced);

  const candidates = await unreferencedBlobs(c, garbage, referenced, opts.unlisted === true);
  await condemn(c, [...candidates]);
  // Their blobs are on the list: the manifests can go (a deployment of them is never served).
  for (const id of garbage) {
    await artifacts.blobs.delete(manifestKey(id));
    c.done.manifests++;
  }
  return c.done;
}

/** One collection's inputs and counts, passed to its steps. */
interface Collection {
  deps: Pick<Deps, 'db' | 'clock' | 'config'>;
  artifacts: ArtifactStore;
  /** When the collection started (epoch ms). */
  now: number;
  graceMs: number;
  done: CollectedArtifacts;
}

/** The artifacts deployments name, but those of projects deleted longer than the retention ago. */
async function namedArtifacts(c: Collection): Promise<Set<string>> {
  const retainedSince = new Date(c.now - c.deps.config.artifactRetentionMs).toISOString();
  const rows = await c.deps.db
    .selectFrom('deployments as d')
    .innerJoin('projects as p', 'p.id', 'd.project_id')
    .select('d.artifact_id')
    .distinct()
    .where('d.artifact_id', 'is not', null)
    .where((eb) => eb.or([eb('p.deleted_at', 'is', null), eb('p.deleted_at', '>', retainedSince)]))
    .execute();
  return new Set(rows.map((r) => r.artifact_id!));
}

/** The stored manifests: live (named, or younger than the grace) and garbage. */
async function listManifests(
  c: Collection,
  named: Set<string>,
): Promise<{ live: string[]; garbage: string[] }> {
  const live: string[] = [];
  const garbage: string[] = [];
  for await (const o of c.artifacts.blobs.list('manifests/')) {
    const id = /^manifests\/(art_[a-z0-9]{20})\.json$/.exec(o.key)?.[1];
    if (!id) continue;
    if (named.has(id) || c.now - o.modifiedAt.getTime() < c.graceMs) live.push(id);
    else garbage.push(id);
  }
  return { live, garbage };
}

/** A condemned blob whose grace is over: spared if referenced again, else removed. */
async function removeDue(c: Collection, key: string, referenced: Set<string>): Promise<void> {
  const { deps, done } = c;
  if (referenced.has(key)) {
    await deps.db.deleteFrom('condemned_blobs').where('key', '=', key).execute();
    done.spared++;
    return;
  }
  // The row is held until the object is gone: a build's rescue of it waits, then writes it again.
  const removed = await deps.db.transaction().execute(async (tx) => {
    const res = await tx
      .deleteFrom('condemned_blobs')
      .where('key', '=', key)
      .where('since', '<=', new Date(c.now - c.graceMs).toISOString())
      .executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) return false;
    await c.artifacts.blobs.delete(key);
    return true;
  });
  if (removed) done.blobs++;
}

/** The blobs of the garbage manifests no live one lists, and with `unlisted` those no manifest lists. */
async function unreferencedBlobs(
  c: Collection,
  garbage: string[],
  referenced: Set<string>,
  unlisted: boolean,
): Promise<Set<string>> {
  const candidates = new Set<string>();
  for (const id of garbage) {
    const manifest = await c.artifacts.readManifest(id);
    for (const file of Object.values(manifest?.files ?? {})) {
      const key = hashKey('blobs', file.hash);
      if (!referenced.has(key)) candidates.add(key);
    }
  }
  if (unlisted) {
    // Listed after the manifests were read: a blob a manifest listed by then is in `referenced`;
    // one written since is younger than the grace, or found by a build that the grace covers.
    for await (const o of c.artifacts.blobs.list('blobs/')) {
      if (!/^blobs\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(o.key)) continue;
      if (c.now - o.modifiedAt.getTime() < c.graceMs || referenced.has(o.key)) continue;
      candidates.add(o.key);
    }
  }
  return candidates;
}

/** Condemns the blobs (a row each, since now), 500 rows a statement; counts the new rows. */
async function condemn(c: Collection, list: string[]): Promise<void> {
  const since = new Date(c.now).toISOString();
  for (let i = 0; i < list.length; i += 500) {
    const batch = list.slice(i, i + 500).map((key) => ({ key, since }));
    const res = await c.deps.db
      .insertInto('condemned_blobs')
      .values(batch)
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    c.done.condemned += Number(res.numInsertedOrUpdatedRows ?? 0);
  }
}

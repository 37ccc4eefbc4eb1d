import { readFile } from 'node:fs/promises';
import type { ArtifactManifest as Manifest } from '../../../builds/roles.ts';
import { hashKey } from '../../../../platform/storage/blob-store.ts';
import { loadRoutingRules, rulesFilesOf } from '../../../../platform/routing/load-rules.ts';
import { NO_RULES, type RoutingRules } from '../../../../platform/routing/match-rules.ts';
import type { ReaderState } from './state.ts';

/**
 * A folder's routing rules not kept yet (ArtifactReader.routingRules): NO_RULES when it has
 * neither file, else read, parsed and kept with the manifest, their size counted in its bound.
 */
export function firstRules(
  s: ReaderState,
  manifest: Manifest,
  folder: string,
  known: Map<string, RoutingRules | Promise<RoutingRules>> | undefined,
): RoutingRules | Promise<RoutingRules> {
  let byFolder = known;
  if (!byFolder) {
    byFolder = new Map<string, RoutingRules | Promise<RoutingRules>>();
    s.rulesOf.set(manifest, byFolder);
  }
  const found = rulesFilesOf(manifest.files, folder);
  if (!found.redirects && !found.headers) {
    byFolder.set(folder, NO_RULES);
    return NO_RULES;
  }
  const kept = byFolder;
  const loading = loadRoutingRules(found, (file) => readBlob(s, file.hash)).then(
    ({ rules, bytes }) => {
      kept.set(folder, rules);
      // Counted in the manifest's size, so that the bound holds rules too.
      const id = s.ids.get(manifest);
      if (bytes > 0 && id !== undefined) {
        s.sizes.set(manifest, (s.sizes.get(manifest) ?? 0) + bytes);
        if (s.cache.peek(id) === manifest) s.cache.set(id, manifest);
      }
      return rules;
    },
    (err: unknown) => {
      kept.delete(folder);
      throw err;
    },
  );
  kept.set(folder, loading);
  return loading;
}

/** A blob's bytes, fetched first when it is not on this disk. */
async function readBlob(s: ReaderState, hash: string): Promise<Buffer> {
  const key = hashKey('blobs', hash);
  const ready = s.files.ensure(key);
  if (ready && !(await ready)) throw Object.assign(new Error(`blob ${hash} is missing`), { code: 'ENOENT' });
  return readFile(s.files.path(key));
}

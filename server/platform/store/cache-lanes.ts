/**
 * Which build caches a build may restore, and under which lane it saves its own, by what the
 * build saw. A cache holds whatever the build left in its workspace, secrets included (a
 * framework's cache can hold the value of any variable the build read), and whatever it wanted
 * the next build to run: it may only flow to builds that see at least the same secrets and
 * are as trusted.
 *
 * - production builds (production variables): only production caches;
 * - previews of a branch (preview variables): their branch's cache, else the newest cache of any
 *   other branch's preview; never production's;
 * - builds of a full ref such as `refs/pull/12/head` (a fork's pull request, code from outside
 *   the repository): only their own ref's cache, and no other build restores theirs.
 */
export interface CacheLanes {
  /** The lane this build's cache is saved under. */
  save: string;
  /** Where to look, in order of preference. */
  restore: CacheSource[];
}

/** One lane by name, or the newest cache of any lane of a kind. */
export type CacheSource = { lane: string } | { newestOf: LaneKind };

export type LaneKind = 'production' | 'preview' | 'ref';

const laneOf = (kind: LaneKind, name: string) => `${kind}:${name}`;

/** The kind of a lane (`production`, `preview`, `ref`), or null for a lane of an older layout. */
export function laneKind(lane: string): LaneKind | null {
  const kind = lane.slice(0, lane.indexOf(':'));
  return kind === 'production' || kind === 'preview' || kind === 'ref' ? kind : null;
}

export function cacheLanes(
  build: { target: 'production' | 'preview'; ref: string },
  productionBranch: string,
): CacheLanes {
  if (build.target === 'production') {
    const own = laneOf('production', build.ref);
    const main = laneOf('production', productionBranch);
    return { save: own, restore: own === main ? [{ lane: own }] : [{ lane: own }, { lane: main }] };
  }
  // A branch name never contains ':' (git refuses it), so lanes cannot be spelled alike.
  if (build.ref.startsWith('refs/') && !build.ref.startsWith('refs/heads/')) {
    const own = laneOf('ref', build.ref);
    return { save: own, restore: [{ lane: own }] };
  }
  const own = laneOf('preview', build.ref.replace(/^refs\/heads\//, ''));
  return { save: own, restore: [{ lane: own }, { newestOf: 'preview' }] };
}

/** For the build log: "a production build of main". */
export function describeLane(lane: string): string {
  const kind = laneKind(lane);
  const name = lane.slice(lane.indexOf(':') + 1);
  if (kind === 'ref') return `a build of ${name}`;
  return kind ? `a ${kind} build of ${name}` : `an older build`;
}

import { sql, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import type { Database, DeploymentsTable, ProjectsTable } from '../store/schema.ts';
import { isSpaFramework } from './spa-frameworks.ts';
import { type DeploymentRuntime, parseRuntime } from '../store/deployment-runtime.ts';

/** What a request to a host serves. */
export interface Target {
  projectId: string;
  deploymentId: string;
  /** The artifact holding the deployment's files; a rollback's comes from the build it reuses. */
  artifactId: string | null;
  /** `static` (files) or `node` (a server process, never served as files: that would expose its source). */
  kind: DeploymentRuntime['kind'];
  /** Unknown extensionless paths fall back to `/index.html`. */
  spa: boolean;
  /** For `node`: the shell command that starts it. */
  startCommand?: string;
  /** For `node`: files answered by the edge before the app (DeploymentRuntime.assetsArtifactId). */
  assetsArtifactId?: string;
  /** For `node`: folders of the app it may write (DeploymentRuntime.writable). */
  writable?: string[];
  /** For `node`: the framework's variables (DeploymentRuntime.env). */
  env?: Record<string, string>;
  /** Whose environment variables a `node` app runs with. */
  environment: 'production' | 'preview';
  /** Set when the deployment's server process runs: proxy to this port. */
  runtime?: { port: number };
  /**
   * Set when this host is protected (docs/protection.md): a visitor needs the project's cookie
   * for it, a share link or the bypass secret. Absent: served to anyone (one check on the edge).
   */
  protection?: TargetProtection;
}

/** What the edge checks a protected host's requests against, without the database. */
export interface TargetProtection {
  /** SHA-256 (hex) of the project's bypass secret; null when it has none. */
  bypassHash: string | null;
  /**
   * The ids of the project's share links, as last looked up: a cookie a share link set opens the
   * host only while its link is here, so revoking a link (a routing change) ends its cookies.
   */
  links: ReadonlySet<string>;
  /**
   * The user ids of the members of the project's organization, as last looked up: a member's
   * sign-in cookie names its user and opens the host only while the user is here, so removing a
   * member (a routing change of each of the organization's projects) ends their cookies.
   */
  members: ReadonlySet<string>;
}

/** Whether a host is a preview's (its own URL, a branch URL) or production's (production URL, custom domains). */
type HostKind = 'preview' | 'production';

type ProtectionCols = Pick<ProjectsTable, 'protection' | 'protection_bypass_hash'>;

/** The protection a host of the project gets: `previews` protects preview hosts, `all` every host. */
export function protectionOf(p: ProtectionCols, kind: HostKind): TargetProtection | undefined {
  if (p.protection === 'all' || (p.protection === 'previews' && kind === 'preview'))
    return { bypassHash: p.protection_bypass_hash, links: new Set(), members: new Set() };
  return undefined;
}

/**
 * A host of a project as the protection gate sees it: the project, and the host's protection
 * (absent: anyone may see what the edge answers there).
 */
export interface Guarded {
  projectId: string;
  protection?: TargetProtection;
}

/**
 * The outcome of looking a Host header up; everything but `target` is answered with a page. The
 * pages of a protected host are protected as its deployment is (`protection`): they tell a
 * deployment's id and state.
 */
export type Resolution =
  | { kind: 'target'; target: Target }
  | { kind: 'unknown' }
  | ({ kind: 'suspended' } & Guarded)
  | ({ kind: 'no-production' } & Guarded)
  /** A branch URL whose branch has no live preview yet. */
  | ({ kind: 'no-branch-deployment' } & Guarded)
  | ({
      kind: 'not-ready';
      deploymentId: string;
      status: Exclude<DeploymentsTable['status'], 'live' | 'deploying'>;
    } & Guarded);

/** The project and protection of the host a resolution answers for; null for an unknown host. */
export function guardOf(r: Resolution): Guarded | null {
  if (r.kind === 'target') return r.target;
  return r.kind === 'unknown' ? null : r;
}

/** `protection` as an optional field: present only when the host is protected. */
const guarded = (protection: TargetProtection | undefined) => (protection ? { protection } : {});

export interface HostResolver {
  /** Resolves a raw Host header (any case, with or without a port). */
  resolve(host: string | undefined): Promise<Resolution>;
  /**
   * The same answer without waiting, when a fresh one is cached; undefined otherwise (then call
   * `resolve`). The edge's synchronous fast path.
   */
  peek(host: string | undefined): Resolution | undefined;
  /**
   * Forgets cached answers so that a routing change applies at once. With a project id: every
   * answer that names the project, every answer still being looked up, and every unknown-host
   * answer (the change may have given the project a host). Without one (a signal may have been
   * missed): everything.
   */
  invalidate(projectId?: string | null): void;
}

export interface ResolverDeps {
  db: Kysely<Database>;
  config: Pick<Config, 'domain' | 'publicEdgeUrl'>;
}

export interface ResolverOptions {
  /**
   * How long an answer is reused, in ms (default 60 s; 0: never). Routing changes drop the
   * answers they touch at once (`invalidate`), so this only bounds how long a lost signal, or a
   * change made outside the service, goes unseen.
   */
  ttlMs?: number;
  /** How long an unknown-host answer is reused, in ms (default the lesser of 5 s and `ttlMs`). */
  unknownTtlMs?: number;
  /** The port of a deployment's running server process, if any (the runtime supervisor's). */
  runtimePort?: (deploymentId: string) => number | undefined;
  /** Milliseconds clock, injected for tests. */
  now?: () => number;
  /** Most hosts kept in the cache (default 50,000); the least recently used go first. */
  maxEntries?: number;
}

/** `Example.COM:3001` -> `example.com`; `[::1]:3001` -> `[::1]`; a trailing dot is dropped. */
export function normalizeHost(raw: string | undefined): string {
  let host = (raw ?? '').trim().toLowerCase();
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    host = close === -1 ? host : host.slice(0, close + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon !== -1) host = host.slice(0, colon);
  }
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

type ProjectCols = Pick<
  ProjectsTable,
  'id' | 'status' | 'framework' | 'production_deployment_id' | 'deleted_at'
> &
  ProtectionCols;

/** A cached answer: shared by concurrent requests while it is being looked up. */
interface Entry {
  host: string;
  /** The count of routing changes when the look-up started. */
  seq: number;
  value: Promise<Resolution>;
  settled?: Resolution;
  /**
   * When a request for it starts looking it up again in the background; Infinity while that
   * look-up is on its way, and for answers never looked up ahead (unsettled, unknown hosts).
   */
  refreshAt: number;
}

/**
 * The share of its lifetime after which an answer in use is looked up again in the background:
 * a host with traffic then never waits for the database on its requests, and one without traffic
 * expires as before.
 */
const REFRESH_AFTER = 0.8;
/** How soon a failed background look-up is tried again (by the next request after it). */
const REFRESH_RETRY_MS = 1000;

/** The project an answer is about; unknown hosts have none. */
const projectOf = (r: Resolution): string | null =>
  r.kind === 'target' ? r.target.projectId : r.kind === 'unknown' ? null : r.projectId;

/** What a target is made of: the deployment `d` and the one it rolled back to, `src`. */
const DEPLOYMENT_COLUMNS = [
  'd.id',
  'd.status',
  'd.target',
  'd.artifact_id',
  'd.runtime',
  'src.artifact_id as source_artifact_id',
  'src.runtime as source_runtime',
] as const;

/** The columns of both halves of a label's look-up (`labelRows`), in one order. */
const LABEL_COLUMNS = [
  'p.id as project_id',
  'p.status as project_status',
  'p.framework',
  'p.deleted_at',
  'p.production_deployment_id',
  'p.protection',
  'p.protection_bypass_hash',
  ...DEPLOYMENT_COLUMNS,
] as const;

export function createHostResolver(deps: ResolverDeps, opts: ResolverOptions = {}): HostResolver {
  const ttlMs = opts.ttlMs ?? 60_000;
  const unknownTtlMs = Math.min(opts.unknownTtlMs ?? 5000, ttlMs);
  /**
   * Each answer lives between 90% and 100% of `ttlMs`, at random: hosts looked up together (an
   * edge starting under load) then expire spread over a tenth of the lifetime instead of all at
   * once, so their next look-ups do not reach the database in one burst.
   */
  const lifetime = () => Math.max(1, Math.round(ttlMs * (0.9 + 0.1 * Math.random())));
  const now = opts.now ?? (() => performance.now());
  const suffixes = [deps.config.domain];
  if (deps.config.publicEdgeUrl) suffixes.push(new URL(deps.config.publicEdgeUrl).hostname.toLowerCase());
  /** The hosts whose settled answer names each project: what `invalidate(projectId)` drops. */
  const byProject = new Map<string, Set<string>>();
  /** Hosts answered `unknown`: a new domain or deployment may make them known. */
  const unknown = new Set<string>();
  /**
   * Answers still being looked up: their project is not known yet. A routing change takes them
   * out of the cache (later requests look up afresh), and when one settles it is kept only if
   * no change since it started names its project (`changedAt`).
   */
  const pending = new Set<Entry>();
  /** Routing changes so far; when each project last changed; when everything or any did. */
  let seq = 0;
  const changedAt = new Map<string, number>();
  let allChangedAt = 0;
  let anyChangedAt = 0;
  /** True when a change since the look-up started may make its answer out of date. */
  const outdated = (entry: Entry, r: Resolution) => {
    if (allChangedAt > entry.seq) return true;
    const projectId = projectOf(r);
    return projectId === null ? anyChangedAt > entry.seq : (changedAt.get(projectId) ?? 0) > entry.seq;
  };
  const unindex = (entry: Entry) => {
    if (!entry.settled) return;
    const projectId = projectOf(entry.settled);
    if (projectId === null) {
      unknown.delete(entry.host);
      return;
    }
    const hosts = byProject.get(projectId);
    hosts?.delete(entry.host);
    if (hosts?.size === 0) byProject.delete(projectId);
  };
  const cache = new LRUCache<string, Entry>({
    max: opts.maxEntries ?? 50_000,
    ttl: Math.max(ttlMs, 1),
    // Checked on every read: an injected clock moves in jumps.
    ttlResolution: 0,
    ...(opts.now ? { perf: { now: opts.now } } : {}),
    // Expired, evicted, replaced or deleted: it no longer answers for its project.
    dispose: (entry) => unindex(entry),
  });
  /** The entry cached for its host, fresh or not (undefined once replaced or dropped). */
  const current = (entry: Entry) => cache.peek(entry.host, { allowStale: true }) === entry;
  const { db } = deps;

  /** The single label left of a service domain, or null: `web.localhost` -> `web`. */
  const labelOf = (host: string): string | null => {
    for (const suffix of suffixes) {
      if (!host.endsWith(`.${suffix}`)) continue;
      const label = host.slice(0, -(suffix.length + 1));
      if (label && !label.includes('.')) return label;
    }
    return null;
  };

  const deploymentQuery = () =>
    db
      .selectFrom('deployments as d')
      .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
      .select(['d.project_id', ...DEPLOYMENT_COLUMNS]);

  const toTarget = (
    d: {
      id: string;
      project_id: string;
      target: DeploymentsTable['target'];
      artifact_id: string | null;
      runtime: string | null;
      source_artifact_id: string | null;
      source_runtime: string | null;
    },
    framework: string | null,
    protection: TargetProtection | undefined,
  ): Resolution => {
    // A rollback reuses its source's build, and with it how that build is served.
    const own = d.artifact_id !== null;
    const runtime = parseRuntime(d.id, own ? d.runtime : (d.runtime ?? d.source_runtime));
    return {
      kind: 'target',
      target: {
        projectId: d.project_id,
        deploymentId: d.id,
        artifactId: own ? d.artifact_id : d.source_artifact_id,
        kind: runtime?.kind ?? 'static',
        // Deployments built before the runtime column existed: judge by the project's framework.
        spa: runtime ? (runtime.spa ?? false) : isSpaFramework(framework),
        ...(runtime?.startCommand ? { startCommand: runtime.startCommand } : {}),
        ...(runtime?.assetsArtifactId ? { assetsArtifactId: runtime.assetsArtifactId } : {}),
        ...(runtime?.writable?.length ? { writable: runtime.writable } : {}),
        ...(runtime?.env ? { env: runtime.env } : {}),
        environment: d.target,
        ...(protection ? { protection } : {}),
      },
    };
  };

  /** Why a project's production is not served (gone, suspended, nothing in it); null when it is. */
  const notServing = (p: ProjectCols): Resolution | null => {
    if (p.deleted_at !== null || p.status === 'deleted') return { kind: 'unknown' };
    const g = guarded(protectionOf(p, 'production'));
    if (p.status === 'suspended') return { kind: 'suspended', projectId: p.id, ...g };
    if (!p.production_deployment_id) return { kind: 'no-production', projectId: p.id, ...g };
    return null;
  };

  /** A project's production: its current production deployment, whatever its URL. */
  const production = async (p: ProjectCols): Promise<Resolution> => {
    const early = notServing(p);
    if (early) return early;
    const d = p.production_deployment_id
      ? await deploymentQuery().where('d.id', '=', p.production_deployment_id).executeTakeFirst()
      : undefined;
    const protection = protectionOf(p, 'production');
    if (!d) return { kind: 'no-production', projectId: p.id, ...guarded(protection) };
    return toTarget(d, p.framework, protection);
  };

  /**
   * A service-domain label in one round trip: the project whose production host it is, with that
   * project's production deployment (`via` 1), the deployment whose host it is (`via` 0: a
   * deployment's URL wins), and the branch URL it is, with the preview it serves (`via` 2: last;
   * allocation keeps branch labels clear of the others). Three queries in turn before; a health
   * probe of a production URL, which is rarely in the cache, paid all three.
   */
  const labelRows = (label: string) =>
    db
      .selectFrom('projects as p')
      .leftJoin('deployments as d', 'd.id', 'p.production_deployment_id')
      .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
      .select([sql<number>`1`.as('via'), ...LABEL_COLUMNS])
      .where('p.production_host', '=', label)
      .where('p.deleted_at', 'is', null)
      .unionAll(
        // The same columns in the same order: a union matches them by position.
        db
          .selectFrom('deployments as d')
          .innerJoin('projects as p', 'p.id', 'd.project_id')
          .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
          .select([sql<number>`0`.as('via'), ...LABEL_COLUMNS])
          .where('d.host', '=', label),
      )
      .unionAll(
        db
          .selectFrom('branch_aliases as a')
          .innerJoin('projects as p', 'p.id', 'a.project_id')
          .leftJoin('deployments as d', 'd.id', 'a.deployment_id')
          .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
          .select([sql<number>`2`.as('via'), ...LABEL_COLUMNS])
          .where('a.host', '=', label),
      )
      .execute();

  /**
   * A protected host's answer with its project's share links and its organization's members (two
   * more queries, for protected hosts only, once per cached look-up). Every link the project has,
   * expired ones too: a link's cookies end with it anyway.
   */
  const lookup = async (host: string): Promise<Resolution> => {
    const r = await lookupHost(host);
    const guard = guardOf(r);
    if (!guard?.protection) return r;
    const [rows, memberRows] = await Promise.all([
      db.selectFrom('protection_links').select('id').where('project_id', '=', guard.projectId).execute(),
      db
        .selectFrom('memberships as m')
        .innerJoin('projects as p', 'p.organization_id', 'm.organization_id')
        .select('m.user_id')
        .where('p.id', '=', guard.projectId)
        .where('m.user_id', 'is not', null)
        .execute(),
    ]);
    // The sets protectionOf made for this answer, not shared with any other yet.
    const links = guard.protection.links as Set<string>;
    for (const { id } of rows) links.add(id);
    const members = guard.protection.members as Set<string>;
    for (const { user_id } of memberRows) members.add(user_id!);
    return r;
  };

  const lookupHost = async (host: string): Promise<Resolution> => {
    const label = labelOf(host);
    if (label) {
      const rows = await labelRows(label);
      const own = rows.find((r) => Number(r.via) === 0);
      if (own?.id && own.status && own.target) {
        const d = { ...own, id: own.id, status: own.status, target: own.target };
        if (d.deleted_at !== null || d.project_status === 'deleted') return { kind: 'unknown' };
        const protection = protectionOf(d, 'preview');
        const g = guarded(protection);
        if (d.project_status === 'suspended') return { kind: 'suspended', projectId: d.project_id, ...g };
        // `deploying` is served too: the builder's health check reaches the deployment by its URL.
        if (d.status === 'live' || d.status === 'deploying') return toTarget(d, d.framework, protection);
        return { kind: 'not-ready', projectId: d.project_id, deploymentId: d.id, status: d.status, ...g };
      }
      const p = rows.find((r) => Number(r.via) === 1);
      if (p) {
        const early = notServing({ ...p, id: p.project_id, status: p.project_status });
        if (early) return early;
        const protection = protectionOf(p, 'production');
        if (!p.id || !p.target)
          return { kind: 'no-production', projectId: p.project_id, ...guarded(protection) };
        return toTarget({ ...p, id: p.id, target: p.target }, p.framework, protection);
      }
      // A branch URL: the newest live preview of its branch, served like the deployment's own URL.
      const b = rows.find((r) => Number(r.via) === 2);
      if (b) {
        if (b.deleted_at !== null || b.project_status === 'deleted') return { kind: 'unknown' };
        const protection = protectionOf(b, 'preview');
        const g = guarded(protection);
        if (b.project_status === 'suspended') return { kind: 'suspended', projectId: b.project_id, ...g };
        if (!b.id || !b.target) return { kind: 'no-branch-deployment', projectId: b.project_id, ...g };
        return toTarget({ ...b, id: b.id, target: b.target }, b.framework, protection);
      }
    }
    const domain = await db
      .selectFrom('domains')
      .innerJoin('projects', 'projects.id', 'domains.project_id')
      .select([
        'projects.id',
        'projects.status',
        'projects.framework',
        'projects.production_deployment_id',
        'projects.deleted_at',
        'projects.protection',
        'projects.protection_bypass_hash',
      ])
      .where('domains.domain', '=', host)
      .where('domains.status', '=', 'verified')
      .executeTakeFirst();
    return domain ? production(domain) : { kind: 'unknown' };
  };

  const cached = (host: string): Promise<Resolution> => {
    const hit = cache.get(host);
    if (hit) {
      if (hit.settled) touch(hit);
      return hit.value;
    }
    const value = lookup(host);
    if (ttlMs <= 0) return value;
    const entry: Entry = { host, seq, value, refreshAt: Infinity };
    cache.set(host, entry, { ttl: lifetime() });
    pending.add(entry);
    value.then(
      (r) => {
        const stale = outdated(entry, r);
        endLookup(entry);
        // A change came while it was looked up: it may have read the database before it.
        if (stale) {
          if (current(entry)) cache.delete(host);
          return;
        }
        // Taken out by a change to some other project: back in, unless a newer look-up is.
        if (!current(entry) && cache.peek(host, { allowStale: true })) return;
        keep(entry, r);
      },
      () => {
        endLookup(entry);
        // A failed look-up is not remembered.
        if (current(entry)) cache.delete(host);
      },
    );
    return value;
  };

  const endLookup = (entry: Entry) => {
    pending.delete(entry);
    if (pending.size === 0) changedAt.clear();
  };

  /** Caches a settled answer for its lifetime (an unknown host's is short) and indexes it. */
  const keep = (entry: Entry, r: Resolution) => {
    entry.settled = r;
    const projectId = projectOf(r);
    if (projectId === null) {
      // An unknown host may become known without a signal here: a short life, no refresh.
      cache.set(entry.host, entry, { ttl: unknownTtlMs });
      unknown.add(entry.host);
      return;
    }
    const ttl = lifetime();
    // Replacing another entry disposes of it (and its index) first.
    cache.set(entry.host, entry, { ttl });
    entry.refreshAt = now() + ttl * REFRESH_AFTER;
    let hosts = byProject.get(projectId);
    if (!hosts) byProject.set(projectId, (hosts = new Set()));
    hosts.add(entry.host);
  };

  /**
   * Looks a cached answer up again while it still answers requests. The new answer replaces it
   * unless a routing change came since the look-up started (the change dropped it, or will be
   * looked up afresh) or it is no longer the cached one; after a failed look-up it answers on
   * until it expires, and a request a second later tries again.
   */
  const refresh = (old: Entry) => {
    old.refreshAt = Infinity;
    const next: Entry = { host: old.host, seq, value: lookup(old.host), refreshAt: Infinity };
    pending.add(next);
    next.value.then(
      (r) => {
        const stale = outdated(next, r);
        endLookup(next);
        if (!stale && current(old)) keep(next, r);
        // Not kept: due again, should it still answer.
        else old.refreshAt = now();
      },
      () => {
        endLookup(next);
        old.refreshAt = now() + REFRESH_RETRY_MS;
      },
    );
  };

  /** A cached answer about to be used: looked up again in the background once it is due. */
  const touch = (entry: Entry) => {
    if (now() >= entry.refreshAt) refresh(entry);
  };

  /** Adds the port of the deployment's running server process, if any. */
  const withPort = (r: Resolution): Resolution => {
    if (r.kind !== 'target') return r;
    const port = opts.runtimePort?.(r.target.deploymentId);
    return port === undefined ? r : { kind: 'target', target: { ...r.target, runtime: { port } } };
  };

  return {
    async resolve(rawHost) {
      const host = normalizeHost(rawHost);
      if (!host) return { kind: 'unknown' };
      return withPort(await cached(host));
    },
    peek(rawHost) {
      const host = normalizeHost(rawHost);
      if (!host) return { kind: 'unknown' };
      const entry = cache.get(host);
      if (!entry?.settled) return undefined;
      touch(entry);
      return withPort(entry.settled);
    },
    invalidate(projectId) {
      seq += 1;
      if (!projectId) {
        allChangedAt = seq;
        cache.clear();
        return;
      }
      anyChangedAt = seq;
      if (pending.size > 0) changedAt.set(projectId, seq);
      // Copied first: each delete disposes the entry, which edits these sets.
      const drop = [...(byProject.get(projectId) ?? []), ...unknown];
      for (const entry of pending) if (current(entry)) drop.push(entry.host);
      for (const host of drop) cache.delete(host);
    },
  };
}

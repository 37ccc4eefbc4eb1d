import type { DeploymentsTable, ProjectsTable } from '../../../../platform/store/schema.ts';
import type { DeploymentRuntime } from '../../../../platform/store/deployment-runtime.ts';

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

export type ProtectionCols = Pick<ProjectsTable, 'protection' | 'protection_bypass_hash'>;

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
export const guarded = (protection: TargetProtection | undefined) => (protection ? { protection } : {});

/** The project an answer is about; unknown hosts have none. */
export const projectOf = (r: Resolution): string | null =>
  r.kind === 'target' ? r.target.projectId : r.kind === 'unknown' ? null : r.projectId;

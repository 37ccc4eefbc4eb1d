import type { DeploymentsTable, ProjectsTable } from '../../../../platform/store/schema.ts';
import { parseRuntime } from '../../../../platform/store/deployment-runtime.ts';
import { isSpaFramework } from '../spa-frameworks.ts';
import {
  guarded,
  protectionOf,
  type ProtectionCols,
  type Resolution,
  type TargetProtection,
} from './resolution.ts';

/** A project as a host's answer reads it. */
export type ProjectCols = Pick<
  ProjectsTable,
  'id' | 'status' | 'framework' | 'production_deployment_id' | 'deleted_at'
> &
  ProtectionCols;

/** A deployment as a target is made of it (`deploymentQuery`, `labelRows`). */
export interface TargetRow {
  id: string;
  project_id: string;
  target: DeploymentsTable['target'];
  artifact_id: string | null;
  runtime: string | null;
  source_artifact_id: string | null;
  source_runtime: string | null;
}

/** A deployment served at a host. */
export function toTarget(
  d: TargetRow,
  framework: string | null,
  protection: TargetProtection | undefined,
): Resolution {
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
}

/** Why a project's production is not served (gone, suspended, nothing in it); null when it is. */
export function notServing(p: ProjectCols): Resolution | null {
  if (p.deleted_at !== null || p.status === 'deleted') return { kind: 'unknown' };
  const g = guarded(protectionOf(p, 'production'));
  if (p.status === 'suspended') return { kind: 'suspended', projectId: p.id, ...g };
  if (!p.production_deployment_id) return { kind: 'no-production', projectId: p.id, ...g };
  return null;
}

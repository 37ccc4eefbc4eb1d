import { z } from 'zod';
import { decodeJson } from '../../core/json-column.ts';

/** deployments.runtime, written by the build: how the edge serves the deployment. */
export const DeploymentRuntime = z.object({
  /** `static`: files from the artifact; `node`: a server process started from the artifact. */
  kind: z.enum(['static', 'node']),
  /** Unknown extensionless paths answer `/index.html`. */
  spa: z.boolean().optional(),
  /** Shell command that starts a `node` app in the artifact's root. */
  startCommand: z.string().min(1).optional(),
  /**
   * `node`: an artifact of files the edge answers itself, at exactly their paths, before the app
   * sees the request (a framework's static assets: `/_next/static/...`, `public/`).
   */
  assetsArtifactId: z.string().optional(),
  /**
   * `node`: folders of the app (relative to its root) it may write, each the deployment's own,
   * kept across restarts and bounded in size (Next.js's ISR and data cache, `.next/cache`).
   */
  writable: z.array(z.string().regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$)).+$/)).optional(),
  /** `node`: variables the framework's server needs behind the edge; the project's own win. */
  env: z.record(z.string(), z.string()).optional(),
});
export type DeploymentRuntime = z.infer<typeof DeploymentRuntime>;

/**
 * Parses deployments.runtime. A value that does not parse is an error (the request gets a 500
 * page), never a guess: guessing `static` for a server app would publish its source.
 */
export function parseRuntime(deploymentId: string, text: string | null): DeploymentRuntime | null {
  return text === null ? null : decodeJson(DeploymentRuntime, text, `Deployment ${deploymentId}'s runtime`);
}

import type { DeploymentRuntime } from '../store/deployment-runtime.ts';

/**
 * The folder of a deployment's artifact that holds its `_redirects` and `_headers`, as a site
 * path prefix: '' for the artifact's root, or e.g. '/public'. The one place that decides it: the
 * edge reads the rules there (`<folder>/_redirects` in the manifest), and the build log reports
 * them from there.
 */
export function rulesFolderOf(runtime: Pick<DeploymentRuntime, 'kind'>): string {
  switch (runtime.kind) {
    case 'static':
      // The artifact is the build's output directory, served as the site.
      return '';
    case 'node':
      // A framework's server: the root of its assets (rulesArtifactOf), where its `public/` or
      // `static/` folder lands; a plain Node.js app: the root of its folder.
      return '';
  }
}

/**
 * The artifact whose folder (rulesFolderOf) holds a deployment's rules: a framework server's
 * static assets when it has them (Next.js's `public/_redirects` is served at `/_redirects`'s
 * place), else the deployment's own artifact.
 */
export function rulesArtifactOf(target: {
  artifactId: string | null;
  assetsArtifactId?: string | undefined;
}): string {
  return target.assetsArtifactId ?? target.artifactId!;
}

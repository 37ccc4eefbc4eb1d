import type { DeploymentRuntime } from '../resolve-host.ts';

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
      // The artifact is the app's whole folder; until server apps have a static root of their
      // own, their rules are read at its root too.
      return '';
  }
}

/**
 * Frameworks (slugs of @vercel/frameworks, as projects.framework stores them) whose builds are
 * single-page apps: the client router owns every path, so the edge answers an unknown path
 * without an extension with `/index.html` instead of a 404.
 */
export const SPA_FRAMEWORKS: readonly string[] = [
  'vite',
  'create-react-app',
  'vue',
  'angular',
  'ionic-angular',
  'ionic-react',
  'preact',
  'svelte',
  'ember',
  'polymer',
  'dojo',
  'stencil',
  'umijs',
  'sanity',
  'sanity-v2',
];

const SPA = new Set(SPA_FRAMEWORKS);

export const isSpaFramework = (framework: string | null): boolean => framework !== null && SPA.has(framework);

import { join, relative } from 'node:path';
import { isDir, isFile } from '../../../core/file-kind.ts';
import type { AppAt, FrameworkOutput } from './types.ts';

/** Whether the app deploys through adapter-auto (the default of `sv create`). */
const usesAdapterAuto = (at: AppAt) =>
  '@sveltejs/adapter-auto' in at.dependencies &&
  !['@sveltejs/adapter-node', '@sveltejs/adapter-static'].some((a) => a in at.dependencies);

/**
 * SvelteKit: adapter-static makes a static site (`build`); adapter-node a server (`build/index.js`).
 * adapter-auto, the default, picks the adapter of the platform it recognises and installs it
 * when missing; on Slipway it is told it builds for a Node.js server (the variable it reads for
 * Google Cloud's buildpacks, which use adapter-node), so it uses adapter-node with no setting.
 */
export const sveltekit: FrameworkOutput = {
  buildEnv: (at): Record<string, string> => (usesAdapterAuto(at) ? { GCP_BUILDPACKS: '1' } : {}),
  describeBuildEnv: (at) =>
    usesAdapterAuto(at)
      ? 'SvelteKit with adapter-auto: building for a Node.js server (adapter-node; GCP_BUILDPACKS=1 is how adapter-auto is told)'
      : null,
  async server({ src, app }) {
    const out = join(app, 'build');
    if (!(await isFile(join(out, 'index.js'))) || !(await isFile(join(out, 'handler.js')))) return null;
    const appPath = relative(src, app);
    return {
      // adapter-node bundles the app but leaves its `dependencies` to node_modules.
      root: src,
      startCommand: appPath ? `cd ${appPath} && node build` : 'node build',
      assets: (await isDir(join(out, 'client'))) ? [{ dir: join(out, 'client'), prefix: '/' }] : [],
      writable: [],
      // Behind the edge the URL's scheme and host are the forwarded ones (form actions check the origin).
      env: { HOST: '0.0.0.0', PROTOCOL_HEADER: 'x-forwarded-proto', HOST_HEADER: 'x-forwarded-host' },
      description: 'SvelteKit server (adapter-node)',
    };
  },
};

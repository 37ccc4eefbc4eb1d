import { join, relative } from 'node:path';
import { isDir, isFile } from '../../../core/file-kind.ts';
import type { FrameworkOutput } from './types.ts';

/**
 * Astro: static by default (`dist`); with the `@astrojs/node` adapter in standalone mode a server
 * (`dist/server/entry.mjs`) whose client files (`dist/client`) the edge serves.
 */
export const astro: FrameworkOutput = {
  async server({ src, app }) {
    const entry = join(app, 'dist', 'server', 'entry.mjs');
    if (!(await isFile(entry))) return null;
    const appPath = relative(src, app);
    const client = join(app, 'dist', 'client');
    return {
      // The server imports its dependencies from node_modules.
      root: src,
      startCommand: `${appPath ? `cd ${appPath} && ` : ''}node dist/server/entry.mjs`,
      assets: (await isDir(client)) ? [{ dir: client, prefix: '/' }] : [],
      writable: [],
      // Its default is localhost, which the sandbox's forwarded port does not reach.
      env: { HOST: '0.0.0.0' },
      description: 'Astro server (@astrojs/node)',
    };
  },
};

import { join } from 'node:path';
import { isDir, isFile } from '../../lib/file-kind.ts';
import type { FrameworkOutput } from './types.ts';

/**
 * Nuxt: `nuxt build` makes a Nitro server (`.output/server/index.mjs`, its dependencies traced
 * into `.output`), deployed as one; `nuxt generate` (a project whose build script runs it) makes
 * only `.output/public`, a static site.
 */
export const nuxt: FrameworkOutput = {
  async server({ app }) {
    const output = join(app, '.output');
    if (!(await isFile(join(output, 'server', 'index.mjs')))) return null;
    return {
      root: output,
      startCommand: 'node server/index.mjs',
      assets: (await isDir(join(output, 'public'))) ? [{ dir: join(output, 'public'), prefix: '/' }] : [],
      writable: [],
      env: { HOST: '0.0.0.0' },
      description: 'Nuxt server (Nitro, node-server preset)',
    };
  },
};

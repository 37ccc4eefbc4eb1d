import { join } from 'node:path';
import { isDir, isFile } from '../../../core/file-kind.ts';
import type { FrameworkOutput } from './types.ts';

/**
 * A Nitro server (`.output/server/index.mjs`, its dependencies traced into `.output`), the output
 * of Nitro's default `node-server` preset. Nuxt (`nuxt build`), SolidStart 1 (through vinxi) and
 * TanStack Start up to 1.131 build one; their static files (`.output/public`) are the edge's.
 * No `.output/server` (`nuxt generate`, a static preset) means a static site.
 */
export function nitroOutput(description: string): FrameworkOutput {
  return {
    async server({ app }) {
      const output = join(app, '.output');
      if (!(await isFile(join(output, 'server', 'index.mjs')))) return null;
      return {
        root: output,
        startCommand: 'node server/index.mjs',
        assets: (await isDir(join(output, 'public'))) ? [{ dir: join(output, 'public'), prefix: '/' }] : [],
        writable: [],
        env: { HOST: '0.0.0.0' },
        description,
      };
    },
  };
}

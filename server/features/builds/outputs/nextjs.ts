import { cp, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { builtFolder } from '../stages/folders.ts';
import { isDir, isFile } from '../../../core/file-kind.ts';
import type { FrameworkOutput } from './types.ts';

/**
 * Next.js: a static export (`output: 'export'`, the `out` folder) is a static site; anything else
 * runs as a server. Slipway builds it with `NEXT_PRIVATE_STANDALONE=1`, which makes Next.js's own
 * standalone output (`.next/standalone`: `server.js` and only the files it traces, about 40 MB
 * against 340-480 MB of node_modules for `next start`) unless next.config sets `output` itself.
 * The edge serves `/_next/static` and `public/` without waking the server; `.next` is the
 * deployment's own writable copy (ISR pages, the data cache, optimised images).
 */
export const nextjs: FrameworkOutput = {
  buildEnv: () => ({ NEXT_PRIVATE_STANDALONE: '1' }),
  describeBuildEnv: () =>
    'Next.js: building its standalone server output (NEXT_PRIVATE_STANDALONE=1; an `output` in next.config wins)',
  async server({ src, app }) {
    const standalone = join(app, '.next', 'standalone');
    if (!(await isDir(standalone))) return null;
    // In a monorepo the standalone tree mirrors the repository: the app's server.js is at its path.
    const appPath = relative(src, app);
    const nested = appPath ? join(standalone, appPath) : standalone;
    const serverDir = (await isFile(join(nested, 'server.js'))) ? nested : await findServerJs(standalone);
    if (!serverDir) return null;
    const inRoot = relative(standalone, serverDir);
    const assets = [{ dir: join(app, '.next', 'static'), prefix: '/_next/static' }];
    const description = 'Next.js server (standalone output)';
    if (await builtFolder(src, join(app, 'public'), description)) {
      assets.push({ dir: join(app, 'public'), prefix: '/' });
      // next/image reads local images from public/ beside server.js (links are kept as links);
      // the routing rules are the edge's, never served.
      await cp(join(app, 'public'), join(serverDir, 'public'), {
        recursive: true,
        verbatimSymlinks: true,
        filter: (from) => !/^\/(_redirects|_headers)$/.test(from.slice(join(app, 'public').length)),
      });
    }
    return {
      root: standalone,
      startCommand: inRoot ? `cd ${inRoot} && node server.js` : 'node server.js',
      assets,
      writable: [inRoot ? `${inRoot}/.next` : '.next'],
      env: { HOSTNAME: '0.0.0.0', NEXT_TELEMETRY_DISABLED: '1' },
      description,
    };
  },
};

/** The folder of the first server.js under `dir`, outside node_modules (two levels at most). */
async function findServerJs(dir: string, depth = 3): Promise<string | null> {
  if (await isFile(join(dir, 'server.js'))) return dir;
  if (depth === 0) return null;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory() || entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const found = await findServerJs(join(dir, entry.name), depth - 1);
    if (found) return found;
  }
  return null;
}

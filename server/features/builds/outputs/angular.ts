import { join } from 'node:path';
import { angularOutput } from '../angular-output.ts';
import { isDir, isFile } from '../../../core/file-kind.ts';
import type { FrameworkOutput } from './types.ts';

/**
 * Angular with server rendering (`@angular/ssr`, `ng new --ssr`): the application builder writes
 * `<outputPath>/server/server.mjs`, the app's own Express server with every dependency bundled in,
 * beside `<outputPath>/browser`, whose files (fingerprinted bundles, prerendered pages, `public/`)
 * the edge serves. Without a server (no SSR, or `outputMode: 'static'`) the browser folder is a
 * static site, as before.
 */
export const angular: FrameworkOutput = {
  async server({ app }) {
    const out = await angularOutput(app);
    if (!out.server || !(await isFile(join(app, out.server, 'server.mjs')))) return null;
    const browser = join(app, out.browser);
    return {
      root: join(app, out.base),
      startCommand: `node ${out.server.slice(out.base.length + 1) || '.'}/server.mjs`,
      assets: (await isDir(browser)) ? [{ dir: browser, prefix: '/' }] : [],
      writable: [],
      env: {
        // @angular/ssr renders only for the hosts it is told (else it falls back to the client-side
        // page): the edge answers only the deployment's own hosts and sets X-Forwarded-Host from
        // them, which is the check Angular asks "another layer" to make before allowing all.
        NG_ALLOWED_HOSTS: '*',
        // The X-Forwarded-* fields the edge sets (a field Angular is not told to trust also makes
        // it fall back to the client-side page).
        NG_TRUST_PROXY_HEADERS: 'x-forwarded-for,x-forwarded-host,x-forwarded-proto',
      },
      description: 'Angular server (@angular/ssr)',
    };
  },
};

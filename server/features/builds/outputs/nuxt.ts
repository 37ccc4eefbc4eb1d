import { nitroOutput } from './nitro.ts';

/**
 * Nuxt: `nuxt build` makes a Nitro server, deployed as one; `nuxt generate` (a project whose build
 * script runs it) makes only `.output/public`, a static site.
 */
export const nuxt = nitroOutput('Nuxt server (Nitro, node-server preset)');
